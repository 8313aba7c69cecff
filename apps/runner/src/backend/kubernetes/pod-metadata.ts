import type { FieldViolation } from '@paddock/contracts';
import { PRIVILEGED_ANNOTATION_PREFIXES } from '@paddock/policy';
import type { LaunchSpec } from '../sandbox-backend';

/**
 * The sandbox pod's metadata beyond the platform's own: the resolved annotations (the sandbox's
 * `annotations`, with the runner policy's pinned `base.annotations` over them) and the base's
 * `labels`. Pure.
 *
 * The platform's own keys all live under {@link PLATFORM_KEY_PREFIX}: the sandbox id the pod is
 * found by, the runner label its watch selects on, the launch-files mark its recovery reads. The
 * default policy denies that prefix to a sandbox's annotations, but an admin policy replaces the
 * default one and may not, and `base` is never checked against it; so this backend refuses any
 * key under it itself, naming the field, instead of letting it override (or be dropped for) the
 * platform's.
 */

/** The prefix of every label and annotation the platform sets on a sandbox's pod and its objects. */
export const PLATFORM_KEY_PREFIX = 'paddock.dev/';

/**
 * Domains Kubernetes reserves for its own components. An annotation there can steer the kubelet,
 * scheduler, autoscaler or a tool acting on the pod, so a sandbox's own annotations (plain
 * metadata) may not use them; the runner's administrator may, in `base.annotations`, except for
 * the runtime and security prefixes below.
 */
const KUBERNETES_DOMAINS = ['kubernetes.io', 'k8s.io'];

/** DNS-1123 subdomain, as the prefix of a qualified name. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a qualified name, and a non-empty label value. */
const QUALIFIED_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** The API server's cap on a pod's annotations, keys and values together. */
const MAX_ANNOTATIONS_BYTES = 256 * 1024;

const field = (base: string, key: string): string => `${base}[${JSON.stringify(key)}]`;

/** Why `key` is not a Kubernetes qualified name (`[prefix/]name`), or undefined when it is. */
export function qualifiedNameProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return 'its prefix is not a DNS subdomain';
  if (name.length > 63 || !QUALIFIED_NAME.test(name)) return 'its name is not 1-63 alphanumerics, with `-`, `_` or `.` inside';
  return undefined;
}

function inKubernetesDomain(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  return KUBERNETES_DOMAINS.some((d) => domain === d || domain.endsWith(`.${d}`));
}

function keyViolation(at: string, key: string, own: boolean): FieldViolation | undefined {
  if (key.startsWith(PLATFORM_KEY_PREFIX)) {
    return { field: at, rule: 'platform_key', description: `keys under ${PLATFORM_KEY_PREFIX} are the platform's own on a sandbox's pod; use another prefix` };
  }
  const privileged = PRIVILEGED_ANNOTATION_PREFIXES.find((p) => key.startsWith(p));
  if (privileged !== undefined) {
    return { field: at, rule: 'privileged_annotation', description: `annotations under ${privileged} change how the runtime or scheduler treats the pod (a sandbox pod stays inside Pod Security restricted)` };
  }
  if (own && inKubernetesDomain(key)) {
    return { field: at, rule: 'reserved_annotation', description: "the kubernetes.io and k8s.io domains are Kubernetes' own; a sandbox's annotations are plain metadata" };
  }
  const problem = qualifiedNameProblem(key);
  return problem ? { field: at, rule: 'qualified_name', description: `not a Kubernetes annotation or label key: ${problem}` } : undefined;
}

/** Why the launch's annotations and base labels cannot go on the pod as written; empty when they can. */
export function podMetadataViolations(spec: Pick<LaunchSpec, 'annotations' | 'base'>): FieldViolation[] {
  const out: FieldViolation[] = [];
  const pinned = spec.base?.annotations ?? {};
  let bytes = 0;
  for (const [key, value] of Object.entries(spec.annotations ?? {})) {
    // The resolved set merges both sources: a pinned key is the administrator's, named as such.
    const own = !(key in pinned);
    const v = keyViolation(field(own ? 'annotations' : 'base.annotations', key), key, own);
    if (v) out.push(v);
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (bytes > MAX_ANNOTATIONS_BYTES) {
    out.push({ field: 'annotations', rule: 'max_bytes', description: `a pod's annotations hold at most ${MAX_ANNOTATIONS_BYTES} bytes, keys and values together`, requested: bytes, limit: MAX_ANNOTATIONS_BYTES });
  }
  for (const [key, value] of Object.entries(spec.base?.labels ?? {})) {
    const at = field('base.labels', key);
    const v = keyViolation(at, key, false);
    if (v) out.push(v);
    else if (value !== '' && (value.length > 63 || !QUALIFIED_NAME.test(value))) {
      out.push({ field: at, rule: 'label_value', description: 'a label value is empty or 1-63 alphanumerics, with `-`, `_` or `.` inside' });
    }
  }
  return out;
}

/** The pod's annotations: the launch's resolved ones under the platform's (which no launch key can reach, see above). */
export function podAnnotationsOf(spec: Pick<LaunchSpec, 'annotations'>, platform: Record<string, string>): Record<string, string> {
  return { ...spec.annotations, ...platform };
}

/** The pod's labels: the base's under the platform's. */
export function podLabelsOf(spec: Pick<LaunchSpec, 'base'>, platform: Record<string, string>): Record<string, string> {
  return { ...spec.base?.labels, ...platform };
}
