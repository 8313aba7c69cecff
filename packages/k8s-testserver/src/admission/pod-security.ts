/**
 * Pod Security Standards (baseline and restricted, "latest"), checked the way the built-in
 * PodSecurity admission plugin words its violations: `<check> (<detail>)`.
 */
import type { Container, PodSpec, SecurityContext } from '../types';

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

interface NamedContainer {
  c: Container;
}

const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE',
  'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT',
]);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes',
]);
const RESTRICTED_VOLUME_SOURCES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);
const ALLOWED_SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);

const quoted = (names: string[]): string => names.map((n) => `"${n}"`).join(', ');
const containersPhrase = (names: string[]): string => `${names.length === 1 ? 'container' : 'containers'} ${quoted(names)}`;

function allContainers(spec: PodSpec): NamedContainer[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])].map((c) => ({ c }));
}

const sc = (c: Container): SecurityContext => c.securityContext ?? {};

type Check = (spec: PodSpec, containers: NamedContainer[]) => string | undefined;

const BASELINE_CHECKS: Check[] = [
  // hostProcess
  (spec, cs) => {
    const bad = cs.filter(({ c }) => sc(c).windowsOptions?.hostProcess === true).map(({ c }) => c.name);
    const pod = spec.securityContext?.windowsOptions?.hostProcess === true;
    if (!pod && bad.length === 0) return undefined;
    const parts = [pod ? 'pod' : '', bad.length ? containersPhrase(bad) : ''].filter(Boolean).join(' and ');
    return `hostProcess (${parts} must not set securityContext.windowsOptions.hostProcess=true)`;
  },
  // host namespaces
  (spec) => {
    const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => spec[k] === true);
    return set.length ? `host namespaces (${set.map((k) => `${k}=true`).join(', ')})` : undefined;
  },
  // privileged
  (_s, cs) => {
    const bad = cs.filter(({ c }) => sc(c).privileged === true).map(({ c }) => c.name);
    return bad.length ? `privileged (${containersPhrase(bad)} must not set securityContext.privileged=true)` : undefined;
  },
  // capabilities beyond the default set
  (_s, cs) => {
    const details: string[] = [];
    for (const { c } of cs) {
      const added = (sc(c).capabilities?.add ?? []).filter((cap) => !BASELINE_CAPABILITIES.has(cap));
      if (added.length) details.push(`container "${c.name}" must not include ${quoted(added)} in securityContext.capabilities.add`);
    }
    return details.length ? `non-default capabilities (${details.join('; ')})` : undefined;
  },
  // hostPath volumes
  (spec) => {
    const bad = (spec.volumes ?? []).filter((v) => v.hostPath !== undefined).map((v) => v.name);
    return bad.length ? `hostPath volumes (${bad.length === 1 ? 'volume' : 'volumes'} ${quoted(bad)})` : undefined;
  },
  // host ports
  (_s, cs) => {
    const details: string[] = [];
    for (const { c } of cs) {
      const ports = (c.ports ?? []).map((p) => p.hostPort).filter((p): p is number => typeof p === 'number' && p !== 0);
      if (ports.length) details.push(`container "${c.name}" uses ${ports.length === 1 ? 'hostPort' : 'hostPorts'} ${ports.join(', ')}`);
    }
    return details.length ? `hostPort (${details.join('; ')})` : undefined;
  },
  // AppArmor
  (spec, cs) => {
    const ok = (t: string | undefined): boolean => t === undefined || t === 'RuntimeDefault' || t === 'Localhost';
    const bad = cs.filter(({ c }) => !ok(sc(c).appArmorProfile?.type)).map(({ c }) => c.name);
    const pod = !ok(spec.securityContext?.appArmorProfile?.type);
    if (!pod && !bad.length) return undefined;
    const parts = [pod ? 'pod' : '', bad.length ? containersPhrase(bad) : ''].filter(Boolean).join(' and ');
    return `forbidden AppArmor profile (${parts} must not set appArmorProfile.type to "Unconfined")`;
  },
  // SELinux
  (spec, cs) => {
    const bad = (o: SecurityContext | undefined): boolean => {
      const se = o?.seLinuxOptions;
      return !!se && (!ALLOWED_SELINUX_TYPES.has(se.type ?? '') || !!se.user || !!se.role);
    };
    const names = cs.filter(({ c }) => bad(c.securityContext)).map(({ c }) => c.name);
    const pod = bad(spec.securityContext);
    if (!pod && !names.length) return undefined;
    const parts = [pod ? 'pod' : '', names.length ? containersPhrase(names) : ''].filter(Boolean).join(' and ');
    return `seLinuxOptions (${parts} set forbidden securityContext.seLinuxOptions: type, user or role)`;
  },
  // /proc mount
  (_s, cs) => {
    const bad = cs.filter(({ c }) => sc(c).procMount !== undefined && sc(c).procMount !== 'Default').map(({ c }) => c.name);
    return bad.length ? `procMount (${containersPhrase(bad)} must not set securityContext.procMount to "Unmasked")` : undefined;
  },
  // seccomp, baseline: anything but Unconfined
  (spec, cs) => {
    const pod = spec.securityContext?.seccompProfile?.type === 'Unconfined';
    const bad = cs.filter(({ c }) => sc(c).seccompProfile?.type === 'Unconfined').map(({ c }) => c.name);
    if (!pod && !bad.length) return undefined;
    const parts = [pod ? 'pod' : '', bad.length ? containersPhrase(bad) : ''].filter(Boolean).join(' and ');
    return `seccompProfile (${parts} must not set securityContext.seccompProfile.type to "Unconfined")`;
  },
  // sysctls
  (spec) => {
    const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name).filter((n) => !SAFE_SYSCTLS.has(n));
    return bad.length ? `forbidden sysctls (${bad.join(', ')})` : undefined;
  },
];

const RESTRICTED_CHECKS: Check[] = [
  // volume types
  (spec) => {
    const details: string[] = [];
    for (const v of spec.volumes ?? []) {
      const source = Object.keys(v).find((k) => k !== 'name');
      if (source !== undefined && !RESTRICTED_VOLUME_SOURCES.has(source)) details.push(`volume "${v.name}" uses restricted volume type "${source}"`);
    }
    return details.length ? `restricted volume types (${details.join(', ')})` : undefined;
  },
  // privilege escalation
  (_s, cs) => {
    const bad = cs.filter(({ c }) => sc(c).allowPrivilegeEscalation !== false).map(({ c }) => c.name);
    return bad.length ? `allowPrivilegeEscalation != false (${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false)` : undefined;
  },
  // unrestricted capabilities
  (_s, cs) => {
    const notDropped = cs.filter(({ c }) => !(sc(c).capabilities?.drop ?? []).includes('ALL')).map(({ c }) => c.name);
    const added: string[] = [];
    for (const { c } of cs) {
      const extra = (sc(c).capabilities?.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE');
      if (extra.length) added.push(`container "${c.name}" must not include ${quoted(extra)} in securityContext.capabilities.add`);
    }
    const details = [notDropped.length ? `${containersPhrase(notDropped)} must set securityContext.capabilities.drop=["ALL"]` : '', ...added].filter(Boolean);
    return details.length ? `unrestricted capabilities (${details.join('; ')})` : undefined;
  },
  // runAsNonRoot
  (spec, cs) => {
    const podValue = spec.securityContext?.runAsNonRoot;
    const explicitFalse = cs.filter(({ c }) => sc(c).runAsNonRoot === false).map(({ c }) => c.name);
    const unset = podValue === true ? [] : cs.filter(({ c }) => sc(c).runAsNonRoot === undefined).map(({ c }) => c.name);
    const details: string[] = [];
    if (podValue === false) details.push('pod must not set securityContext.runAsNonRoot=false');
    if (explicitFalse.length) details.push(`${containersPhrase(explicitFalse)} must not set securityContext.runAsNonRoot=false`);
    if (unset.length && podValue !== false) details.push(`pod or ${containersPhrase(unset)} must set securityContext.runAsNonRoot=true`);
    return details.length ? `runAsNonRoot != true (${details.join('; ')})` : undefined;
  },
  // runAsUser=0
  (spec, cs) => {
    const pod = spec.securityContext?.runAsUser === 0;
    const bad = cs.filter(({ c }) => sc(c).runAsUser === 0).map(({ c }) => c.name);
    if (!pod && !bad.length) return undefined;
    const parts = [pod ? 'pod' : '', bad.length ? containersPhrase(bad) : ''].filter(Boolean).join(' and ');
    return `runAsUser=0 (${parts} must not set runAsUser=0)`;
  },
  // seccomp, restricted: RuntimeDefault or Localhost on the pod or on every container
  (spec, cs) => {
    const ok = (t: string | undefined): boolean => t === 'RuntimeDefault' || t === 'Localhost';
    const podOk = ok(spec.securityContext?.seccompProfile?.type);
    const bad = cs
      .filter(({ c }) => {
        const t = sc(c).seccompProfile?.type;
        return t === undefined ? !podOk : !ok(t) && t !== 'Unconfined';
      })
      .map(({ c }) => c.name);
    if (!bad.length) return undefined;
    return `seccompProfile (pod or ${containersPhrase(bad)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`;
  },
];

/** Violations of a Pod Security level for a pod spec; empty when the spec is admitted. */
export function checkPodSecurity(spec: PodSpec, level: PodSecurityLevel): string[] {
  if (level === 'privileged') return [];
  const containers = allContainers(spec);
  const checks = level === 'restricted' ? [...BASELINE_CHECKS, ...RESTRICTED_CHECKS] : BASELINE_CHECKS;
  return checks.map((check) => check(spec, containers)).filter((v): v is string => v !== undefined);
}

/** Violations of the `restricted` profile (the one sandbox namespaces enforce). */
export function checkPodSecurityRestricted(spec: PodSpec): string[] {
  return checkPodSecurity(spec, 'restricted');
}

/** The admission message tail: `violates PodSecurity "restricted:latest": <v1>, <v2>`. */
export const podSecurityMessage = (level: PodSecurityLevel, version: string, violations: string[]): string =>
  `violates PodSecurity "${level}:${version}": ${violations.join(', ')}`;
