/**
 * Kubernetes label and annotation keys Paddock puts on what it creates: the control plane's
 * deployment spec, the controller's runner manifests and the runner's sandbox pods read and
 * select by the same keys.
 */
export const LABELS = {
  runnerId: 'paddock.dev/runner-id',
  runnerUid: 'paddock.dev/runner-uid',
  organizationId: 'paddock.dev/organization-id',
  clusterId: 'paddock.dev/cluster-id',
  sandboxId: 'paddock.dev/sandbox-id',
  name: 'app.kubernetes.io/name',
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  partOf: 'app.kubernetes.io/part-of',
} as const;

export const ANNOTATIONS = {
  /** The runner revision a runner Deployment's pods were rendered from. */
  revision: 'paddock.dev/revision',
  policyEtag: 'paddock.dev/policy-etag',
  sandboxId: 'paddock.dev/sandbox-id',
  /** A sandbox pod's requested labels (JSON), kept so that adoption after a restart restores them. */
  launchLabels: 'paddock.dev/launch-labels',
  launchFiles: 'paddock.dev/launch-files',
} as const;

/** The value of `app.kubernetes.io/managed-by` on everything the controller manages. */
export const MANAGED_BY_CONTROLLER = 'paddock-controller';
