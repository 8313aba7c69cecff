import * as k8s from '@kubernetes/client-node';

/** The HTTP status of a failed API call, or undefined when the failure is not the API server's answer. */
export const statusCode = (e: unknown): number | undefined =>
  e instanceof k8s.ApiException ? e.code : undefined;
