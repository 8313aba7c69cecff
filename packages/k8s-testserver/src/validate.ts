/**
 * Offline schema validation of manifests with kubernetes-models (the OpenAPI schemas of the
 * Kubernetes release it was generated from), for every kind the server serves and a few more
 * that builders commonly emit.
 */
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { ReplicaSet } from 'kubernetes-models/apps/v1/ReplicaSet';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { Lease } from 'kubernetes-models/coordination.k8s.io/v1/Lease';
import { Event as EventsV1Event } from 'kubernetes-models/events.k8s.io/v1/Event';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { RuntimeClass } from 'kubernetes-models/node.k8s.io/v1/RuntimeClass';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { PriorityClass } from 'kubernetes-models/scheduling.k8s.io/v1/PriorityClass';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Event as CoreEvent } from 'kubernetes-models/v1/Event';
import { LimitRange } from 'kubernetes-models/v1/LimitRange';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Node } from 'kubernetes-models/v1/Node';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Pod } from 'kubernetes-models/v1/Pod';
import { ResourceQuota } from 'kubernetes-models/v1/ResourceQuota';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { isRecord } from './types';

interface Validatable {
  validate(): void;
}

type ModelFactory = (data: Record<string, unknown>) => Validatable;

// The constructors' parameter types are exact per kind; the data has been checked for
// apiVersion/kind before one is picked, so widening it here is safe.
const model = <T extends Validatable>(ctor: new (data: never) => T): ModelFactory => (data) => new ctor(data as never);

const MODELS: Record<string, ModelFactory> = {
  'apps/v1/Deployment': model(Deployment),
  'apps/v1/ReplicaSet': model(ReplicaSet),
  'apps/v1/StatefulSet': model(StatefulSet),
  'apps/v1/DaemonSet': model(DaemonSet),
  'batch/v1/Job': model(Job),
  'batch/v1/CronJob': model(CronJob),
  'coordination.k8s.io/v1/Lease': model(Lease),
  'events.k8s.io/v1/Event': model(EventsV1Event),
  'networking.k8s.io/v1/NetworkPolicy': model(NetworkPolicy),
  'networking.k8s.io/v1/Ingress': model(Ingress),
  'node.k8s.io/v1/RuntimeClass': model(RuntimeClass),
  'policy/v1/PodDisruptionBudget': model(PodDisruptionBudget),
  'rbac.authorization.k8s.io/v1/ClusterRole': model(ClusterRole),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': model(ClusterRoleBinding),
  'rbac.authorization.k8s.io/v1/Role': model(Role),
  'rbac.authorization.k8s.io/v1/RoleBinding': model(RoleBinding),
  'scheduling.k8s.io/v1/PriorityClass': model(PriorityClass),
  'v1/ConfigMap': model(ConfigMap),
  'v1/Event': model(CoreEvent),
  'v1/LimitRange': model(LimitRange),
  'v1/Namespace': model(Namespace),
  'v1/Node': model(Node),
  'v1/PersistentVolumeClaim': model(PersistentVolumeClaim),
  'v1/Pod': model(Pod),
  'v1/ResourceQuota': model(ResourceQuota),
  'v1/Secret': model(Secret),
  'v1/Service': model(Service),
  'v1/ServiceAccount': model(ServiceAccount),
};

/** A schema violation with the field in the API server's dotted form (`spec.template.spec.containers[0].name`). */
export interface ManifestProblem {
  field: string;
  reason: 'FieldValueRequired' | 'FieldValueInvalid';
  message: string;
}

const toFieldPath = (instancePath: string): string =>
  instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc ? `${acc}.${s}` : s), '');

export function manifestProblems(obj: unknown): ManifestProblem[] {
  if (!isRecord(obj)) return [{ field: '', reason: 'FieldValueInvalid', message: 'manifest must be an object' }];
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || !apiVersion) return [{ field: 'apiVersion', reason: 'FieldValueRequired', message: 'Required value' }];
  if (typeof kind !== 'string' || !kind) return [{ field: 'kind', reason: 'FieldValueRequired', message: 'Required value' }];
  const factory = MODELS[`${apiVersion}/${kind}`];
  if (!factory) return [{ field: 'kind', reason: 'FieldValueInvalid', message: `no schema known for ${apiVersion} ${kind}` }];
  try {
    factory(obj).validate();
    return [];
  } catch (e) {
    const errors = isRecord(e) && Array.isArray(e.errors) ? (e.errors as unknown[]) : [];
    if (errors.length === 0) return [{ field: '', reason: 'FieldValueInvalid', message: e instanceof Error ? e.message : String(e) }];
    return errors.filter(isRecord).map((err): ManifestProblem => {
      const base = toFieldPath(typeof err.instancePath === 'string' ? err.instancePath : '');
      const params = isRecord(err.params) ? err.params : {};
      const message = typeof err.message === 'string' ? err.message : 'invalid';
      if (err.keyword === 'required' && typeof params.missingProperty === 'string') {
        return { field: base ? `${base}.${params.missingProperty}` : params.missingProperty, reason: 'FieldValueRequired', message: 'Required value' };
      }
      return { field: base, reason: 'FieldValueInvalid', message: `Invalid value: ${message}` };
    });
  }
}

/** Schema problems of a manifest, one line each (`spec.selector: Required value`); empty when valid. */
export function validateManifest(obj: unknown): string[] {
  return manifestProblems(obj).map((p) => (p.field ? `${p.field}: ${p.message}` : p.message));
}
