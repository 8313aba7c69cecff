import { isObj } from './network';

/**
 * Legacy v1beta2 profile templates: a template bound to a runner may
 * carry a privileged posture only when the runner sets `allow_privileged_profile_annotations=true`.
 * The flag governs two kinds of content:
 * - privileged pod annotations: the runtime and scheduler prefixes in {@link PRIVILEGED_ANNOTATION_PREFIXES};
 * - privileged structured pod-spec fields: `serviceAccountName`, host namespaces, `hostPath`
 *   volumes, privileged or privilege-escalating containers, AppArmor/seccomp profiles.
 */

/**
 * Annotation prefixes that change how the runtime or the scheduler treats the pod. Chosen to
 * cover the runtime-class machinery (Kata, gVisor, CRI-O/containerd runtime handlers), the
 * legacy AppArmor/seccomp annotations, and scheduler-steering annotations.
 */
export const PRIVILEGED_ANNOTATION_PREFIXES = [
  'io.kubernetes.cri-o.',
  'io.katacontainers.',
  'dev.gvisor.',
  'io.containerd.',
  'container.apparmor.security.beta.kubernetes.io/',
  'seccomp.security.alpha.kubernetes.io/',
  'container.seccomp.security.alpha.kubernetes.io/',
  'scheduler.alpha.kubernetes.io/',
  'scheduler.kubernetes.io/',
  'cluster-autoscaler.kubernetes.io/',
] as const;

const HOST_NAMESPACE_FIELDS = ['hostNetwork', 'hostPID', 'hostIPC', 'hostUsers'] as const;

export interface CheckProfileTemplateOptions {
  bindingIndex: number;
  templateId: string;
  allowPrivilegedProfileAnnotations: boolean;
}

export type CheckProfileTemplateResult =
  { ok: true } | { ok: false; privilegedFields: string[]; message: string };

function parseJsonObject(v: unknown): Record<string, unknown> | undefined {
  if (isObj(v)) return v;
  if (typeof v !== 'string' || v.length > 1024 * 1024) return undefined;
  try {
    const parsed: unknown = JSON.parse(v);
    return isObj(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function checkSecurityContext(
  sc: unknown,
  prefix: string,
  out: string[],
  container: boolean,
): void {
  if (!isObj(sc)) return;
  if (isObj(sc.appArmorProfile) || sc.appArmorProfile !== undefined) {
    out.push(`${prefix}securityContext.appArmorProfile`);
  }
  if (sc.seccompProfile !== undefined) out.push(`${prefix}securityContext.seccompProfile`);
  if (container) {
    if (sc.privileged === true) out.push(`${prefix}securityContext.privileged`);
    if (sc.allowPrivilegeEscalation === true) {
      out.push(`${prefix}securityContext.allowPrivilegeEscalation`);
    }
    if (
      isObj(sc.capabilities) &&
      Array.isArray(sc.capabilities.add) &&
      sc.capabilities.add.length > 0
    ) {
      out.push(`${prefix}securityContext.capabilities.add`);
    }
  }
}

function checkAnnotations(meta: unknown, prefix: string, out: string[]): void {
  if (!isObj(meta) || !isObj(meta.annotations)) return;
  for (const k of Object.keys(meta.annotations).sort()) {
    if (PRIVILEGED_ANNOTATION_PREFIXES.some((p) => k.startsWith(p))) {
      out.push(`${prefix}metadata.annotations[${k}]`);
    }
  }
}

/**
 * Lists privileged fields of a pod spec (or a pod template `{metadata, spec}`), with paths
 * relative to the pod spec, e.g. `securityContext.seccompProfile`, `containers[0].securityContext.privileged`.
 */
export function findPrivilegedPodFields(podTemplate: unknown): string[] {
  const root = parseJsonObject(podTemplate);
  if (!root) return [];
  const out: string[] = [];
  // Accept a bare pod spec or a template / Pod with `metadata` and `spec`.
  const spec = isObj(root.spec) ? root.spec : root;
  checkAnnotations(root.metadata, '', out);
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') {
    out.push('serviceAccountName');
  }
  if (typeof spec.serviceAccount === 'string' && spec.serviceAccount !== '') {
    out.push('serviceAccount');
  }
  for (const f of HOST_NAMESPACE_FIELDS) {
    if (f === 'hostUsers' ? spec[f] === true : spec[f] === true) out.push(f);
  }
  checkSecurityContext(spec.securityContext, '', out, false);
  for (const list of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    const cs = spec[list];
    if (!Array.isArray(cs)) continue;
    cs.forEach((c: unknown, i) => {
      if (!isObj(c)) return;
      checkSecurityContext(c.securityContext, `${list}[${i}].`, out, true);
    });
  }
  const vols = spec.volumes;
  if (Array.isArray(vols)) {
    vols.forEach((v: unknown, i) => {
      if (isObj(v) && v.hostPath !== undefined) out.push(`volumes[${i}].hostPath`);
    });
  }
  return out;
}

/**
 * Checks a profile template bound at `profile_bindings[bindingIndex]`. The template may be the
 * template object (`{spec: {podTemplateJson}}`, snake or camel), its spec, or a pod template.
 */
export function checkProfileTemplate(
  template: unknown,
  opts: CheckProfileTemplateOptions,
): CheckProfileTemplateResult {
  const t = parseJsonObject(template);
  const spec = t && isObj(t.spec) ? t.spec : t;
  const podJson = spec ? (spec.podTemplateJson ?? spec.pod_template_json) : undefined;
  const fields = findPrivilegedPodFields(
    podJson ??
      (spec && (isObj(spec.containers) || Array.isArray(spec.containers)) ? spec : undefined),
  );
  if (fields.length === 0 || opts.allowPrivilegedProfileAnnotations) return { ok: true };
  const message = `profile_bindings[${opts.bindingIndex}]: template "${opts.templateId}" contains privileged pod-spec fields [${fields.join(' ')}]; runner does not have allow_privileged_profile_annotations=true`;
  return { ok: false, privilegedFields: fields, message };
}
