import type { RunnerCapabilities } from '@paddock/contracts';
import { type CompiledPolicy } from '../compile';
import { type Merged } from '../merge';
import { type SpecRead } from '../spec/reader';
import { type Sink } from '../violations';

/**
 * What every constraint family is checked against: the request as read, the merged values (with
 * the layer each came from), the compiled policy and what the target runner can enforce. A family
 * only reports; it never changes a value (nothing is ever narrowed).
 */
export interface ConstraintInput {
  /** The request as written (a JSON object), for families that look at which fields it sets. */
  spec: Record<string, unknown>;
  read: SpecRead;
  merged: Merged;
  policy: CompiledPolicy;
  caps: RunnerCapabilities;
  sink: Sink;
}

/** Where each constraint lives in a policy document, named in every violation it causes. */
export const CONSTRAINT = {
  maxGpuCount: 'constraints.resources.maxGpuCount',
  requireLimits: 'constraints.resources.requireLimits',
  allowedRegistries: 'constraints.image.allowedRegistries',
  allowedImages: 'constraints.image.allowedImages',
  allowedEgress: 'constraints.network.allowedEgress',
  allowedIngress: 'constraints.network.allowedIngress',
  denyHostnames: 'constraints.network.denyHttpsHostnameRules',
  allowPrivileged: 'constraints.security.allowPrivileged',
  allowedCapabilities: 'constraints.security.allowedCapabilities',
  allowedSeccomp: 'constraints.security.allowedSeccompProfiles',
  allowedRuntimeClasses: 'constraints.security.allowedRuntimeClasses',
  allowedInstanceTypes: 'constraints.instance.allowedInstanceTypes',
  deniedPrefixes: 'constraints.metadata.deniedAnnotationPrefixes',
  maxAnnotations: 'constraints.metadata.maxAnnotationCount',
  allowedMedia: 'constraints.volumes.allowedMedia',
  maxSize: 'constraints.volumes.maxSize',
} as const;
