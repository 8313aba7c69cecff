/** Shapes of the Kubernetes objects this server stores: plain JSON, typed only where we read them. */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldsTree;
  subresource?: string;
}

export interface FieldsTree {
  [step: string]: FieldsTree;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

/** What a test says about a node; the server fills in the rest of a realistic Node object. */
export interface NodeSpecLite {
  name: string;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  /** Defaults to 8 CPUs / 32Gi / 110 pods. */
  capacity?: { cpu?: string; memory?: string; pods?: string };
}

export interface SecurityContext {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  procMount?: string;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type?: string; localhostProfile?: string };
  seLinuxOptions?: { type?: string; user?: string; role?: string; level?: string };
  appArmorProfile?: { type?: string };
  windowsOptions?: { hostProcess?: boolean };
}

export interface PodSecurityContext extends SecurityContext {
  sysctls?: { name: string; value: string }[];
  fsGroup?: number;
  supplementalGroups?: number[];
}

export interface ContainerPort {
  containerPort: number;
  hostPort?: number;
  protocol?: string;
  name?: string;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[];
  ports?: ContainerPort[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
  [field: string]: unknown;
}

export interface Volume {
  name: string;
  [source: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  volumes?: Volume[];
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  affinity?: unknown;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  activeDeadlineSeconds?: number;
  terminationGracePeriodSeconds?: number;
  runtimeClassName?: string;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  schedulerName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  hostUsers?: boolean;
  securityContext?: PodSecurityContext;
  [field: string]: unknown;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
  lastProbeTime?: string | null;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep copy of JSON data; objects in the store are never shared with callers. */
export const clone = <T>(v: T): T => structuredClone(v);

/** RFC 3339 with second precision, the way the API server writes metav1.Time. */
export const nowTimestamp = (d = new Date()): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
