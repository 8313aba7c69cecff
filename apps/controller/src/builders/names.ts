import { ANNOTATIONS, LABELS } from '@paddock/contracts';

/** Every Kubernetes name the controller uses is built here (DNS-1123 labels, ≤ 63 chars). */
const clip = (s: string): string => s.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 63).replace(/-+$/, '');

export const FIELD_MANAGER = 'paddock-controller';
export const LABEL_RUNNER = LABELS.runnerId;
export const LABEL_RUNNER_UID = LABELS.runnerUid;
export const LABEL_ORG = LABELS.organizationId;
/** The cluster id: a controller only garbage-collects objects of its own cluster. */
export const LABEL_CLUSTER = LABELS.clusterId;
export const LABEL_COMPONENT = LABELS.component;
export const LABEL_MANAGED_BY = LABELS.managedBy;
export const ANNOTATION_REVISION = ANNOTATIONS.revision;

export const runnerNamespace = (runnerId: string): string => clip(`paddock-runner-${runnerId}`);
export const sandboxNamespace = (runnerId: string): string => clip(`paddock-sandboxes-${runnerId}`);
export const runnerName = (runnerId: string): string => clip(`runner-${runnerId}`);
/**
 * The RoleBinding that grants the runner its sandbox namespace (RUNNER_SANDBOX_CLUSTER_ROLE). Not
 * `runnerName`: that was the binding of the per-runner Role earlier releases wrote, and a
 * binding's roleRef cannot change, so the new one is a new object (see LEGACY_SANDBOX_ROLE_NAME).
 */
export const runnerSandboxBindingName = (runnerId: string): string => clip(`runner-${runnerId}-sandboxes`);
/** The Role and RoleBinding, both `runnerName`, that earlier releases wrote in the sandbox namespace. */
export const legacySandboxRoleName = (runnerId: string): string => runnerName(runnerId);
export const runnerConfigMapName = (runnerId: string): string => clip(`runner-${runnerId}-config`);
/** The Secret holding the runner's NATS credentials (mounted as a file, never as an env value). */
export const runnerNatsSecretName = (runnerId: string): string => clip(`runner-${runnerId}-nats`);
