import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import {
  PaddockError,
  SandboxSpecSchema,
  type Container,
  type Policy,
  type ResolvedSandboxSpec,
  type SandboxSpecInput,
  type SandboxVolume,
} from '@paddock/contracts';
import { checkPodSecurityRestricted, validateManifest, type PodSpec } from '@paddock/k8s-testserver';
import { resolveSandboxSpec } from '@paddock/policy';
import { KubernetesBackend } from '../../src/backend/kubernetes';
import {
  buildSandboxNetworkPolicy,
  buildSandboxPod,
  LAUNCH_LABELS_ANNOTATION,
  podNameFor,
  refusedGpuType,
  refusedRuntimeClass,
  type SandboxPodOptions,
} from '../../src/backend/kubernetes/sandbox-pod';
import { buildSandboxServices, relayPeerFor, SANDBOX_POD_LABEL } from '../../src/backend/kubernetes/services';
import { bwrapArgs } from '../../src/backend/local/bwrap-args';
import { buildPod } from '../../src/backend/local/containers';
import { LocalBackend } from '../../src/backend/local/local-backend';
import { baseTableScript } from '../../src/backend/local/net/nft-ruleset';
import { parseIpv4Cidr } from '../../src/backend/local/net/cidr';
import type { LaunchSpec, SandboxBackend } from '../../src/backend/sandbox-backend';
import { buildSecretEnvSecret, secretEnvSecretNameFor } from '../../src/backend/kubernetes/secret-env';
import { GPU_MEMORY_LABEL } from '../../src/backend/kubernetes/gpu-affinity';
import { checkPod } from '../../src/service/launch-pod';
import { checkLaunchViolations } from '../../src/service/launch-security';
import { checkSecretStoreShapes, secretEnvNamesOf } from '../../src/service/secret-env';
import { checkPrimaryOnlyParts } from '../../src/service/primary-only-parts';
import { effectiveFieldsOf, SANDBOX_META_LABEL, toLaunchSpec } from '../../src/service/launch-spec';
import { specFieldPaths } from './spec-fields';

/**
 * Every field of the sandbox request has exactly one of two outcomes on each backend: it reaches
 * the backend with an effect one can see (on the LaunchSpec the local backend runs, on the pod,
 * NetworkPolicy and Services the Kubernetes backend creates, which must stay valid and inside Pod Security
 * `restricted`), or resolution against that backend's declared
 * capabilities refuses it with a violation naming the field. The fields come from the zod schema
 * (spec-fields.ts), so a new field fails here until it has a sample and one of the two outcomes.
 *
 * Each field has samples: a request using it and, by default, the same request without it. An
 * admitted sample must change what the backend launches, or show the property it asks for when
 * the backend always has it (`exhibits`: a read-only root, dropped capabilities, no ingress). The
 * few fields that steer the platform rather than the sandbox (which runner, which container an
 * exec addresses, listing by tag) show their effect on the resolved spec the runner records and
 * the gateway reads (`steers`).
 */

type BackendName = 'local' | 'kubernetes';
const BACKENDS: readonly BackendName[] = ['local', 'kubernetes'];

/** What a backend makes of a launch: the parts one can compare and inspect. */
interface Launched {
  launch: LaunchSpec;
  /** Local: the bubblewrap argv. */
  bwrap: string[];
  /** Kubernetes: the pod, its NetworkPolicy, its Services, and its secret-env Secret when it has one. */
  pod: k8s.V1Pod;
  networkPolicy: k8s.V1NetworkPolicy;
  services: k8s.V1Service[];
  envSecret: k8s.V1Secret | undefined;
}

interface Sample {
  spec: SandboxSpecInput;
  /** The same request without the field; default {@link BASE}. */
  without?: SandboxSpecInput;
  /** The field as a violation names it; default the schema path with `[]` read as `[0]`. */
  field?: string;
  exhibits?: Partial<Record<BackendName, (l: Launched) => boolean>>;
  steers?: (r: ResolvedSandboxSpec) => boolean;
}

const MAIN: Container = { command: ['sleep', '60'] };
const BASE: SandboxSpecInput = { containers: [MAIN] };
const SCRATCH: SandboxVolume[] = [{ name: 'scratch', scratch: {} }];

/** A sample on the primary container (and, from it, the same one on an init container). */
interface ContainerSample {
  c: Container;
  without?: Container;
  volumes?: SandboxVolume[];
  exhibits?: Sample['exhibits'];
  steers?: Sample['steers'];
  /** The field under the container, when not the schema path (`volumeMounts[1]`). */
  field?: string;
  /**
   * The same field as an init container asks it, when `c`'s value could not show there: an init
   * container's amounts count in the sandbox's totals only where they exceed the containers'
   * together (it runs before them, alone), so its sample asks for more than the primary's 1 CPU / 1Gi.
   */
  init?: Container;
}

const gpu1 = { count: 1 };
const CONTAINER_SAMPLES: Record<string, ContainerSample[]> = {
  args: [{ c: { args: ['--flag'] } }],
  command: [{ c: { command: 'sleep 30' } }, { c: { command: ['sleep', '30'] } }],
  environmentVariables: [{ c: { environmentVariables: { GREETING: 'hello' } } }],
  'files[]': [
    {
      c: { files: [{ path: '/workspace/a', content: 'YQ==' }, { path: '/workspace/b', content: 'Yg==' }] },
      without: { files: [{ path: '/workspace/a', content: 'YQ==' }] },
      field: 'files[1]',
    },
  ],
  'files[].content': [{ c: { files: [{ path: '/workspace/a', content: 'aGVsbG8=' }] } }],
  'files[].path': [{ c: { files: [{ path: '/workspace/a', content: 'aGVsbG8=' }] } }],
  image: [{ c: { image: 'paddock/tools' } }],
  imagePullCredentials: [{ c: { imagePullCredentials: { registry: 'registry.example:5000', credentials: { storeName: 'registry', path: 'login' } } } }],
  name: [{ c: { name: 'web' }, steers: (r) => r.primaryContainer === 'web' }],
  // On the primary container, `primary` only means something beside another container
  // (`containers[].primary` among the spec samples); on an init container it is refused with it.
  primary: [{ c: { primary: true } }],
  'resourceRequirements.limits.cpu': [{ c: { resourceRequirements: { limits: { cpu: '2' } } } }],
  'resourceRequirements.limits.memory': [{ c: { resourceRequirements: { limits: { memory: '768Mi' } } }, init: { resourceRequirements: { limits: { memory: '2Gi' } } } }],
  'resourceRequirements.limits.gpu.count': [{ c: { resourceRequirements: { limits: { gpu: gpu1 } } } }],
  'resourceRequirements.limits.gpu.type': [
    { c: { resourceRequirements: { limits: { gpu: { count: 1, type: 'H100' } } } }, without: { resourceRequirements: { limits: { gpu: gpu1 } } } },
  ],
  'resourceRequirements.limits.gpu.memoryGb': [
    { c: { resourceRequirements: { limits: { gpu: { count: 1, memoryGb: 80 } } } }, without: { resourceRequirements: { limits: { gpu: gpu1 } } } },
  ],
  'resourceRequirements.requests.cpu': [{ c: { resourceRequirements: { requests: { cpu: '100m' } } }, init: { resourceRequirements: { requests: { cpu: '2' } } } }],
  'resourceRequirements.requests.memory': [{ c: { resourceRequirements: { requests: { memory: '64Mi' } } }, init: { resourceRequirements: { requests: { memory: '2Gi' } } } }],
  'resourceRequirements.requests.gpu.count': [{ c: { resourceRequirements: { requests: { gpu: gpu1 } } } }],
  'resourceRequirements.requests.gpu.type': [
    { c: { resourceRequirements: { requests: { gpu: { count: 1, type: 'H100' } } } }, without: { resourceRequirements: { requests: { gpu: gpu1 } } } },
  ],
  'resourceRequirements.requests.gpu.memoryGb': [
    { c: { resourceRequirements: { requests: { gpu: { count: 1, memoryGb: 80 } } } }, without: { resourceRequirements: { requests: { gpu: gpu1 } } } },
  ],
  'resources.cpu': [{ c: { resources: { cpu: '2' } } }],
  'resources.memory': [{ c: { resources: { memory: '768Mi' } }, init: { resources: { memory: '2Gi' } } }],
  'resources.gpu.count': [{ c: { resources: { gpu: gpu1 } } }],
  'resources.gpu.type': [{ c: { resources: { gpu: { count: 1, type: 'H100' } } }, without: { resources: { gpu: gpu1 } } }],
  'resources.gpu.memoryGb': [
    {
      c: { resources: { gpu: { count: 1, memoryGb: 80 } } },
      without: { resources: { gpu: gpu1 } },
      // Nodes whose GPUs have 80 GB (81920 MiB) or more, and still one GPU requested.
      exhibits: {
        kubernetes: (l) =>
          isDeepStrictEqual(l.pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms, [
            { matchExpressions: [{ key: GPU_MEMORY_LABEL, operator: 'Gt', values: ['81919'] }] },
          ]) && sandboxContainer(l).resources?.limits?.['nvidia.com/gpu'] === '1',
      },
    },
  ],
  secretStores: [
    {
      c: { secretStores: [{ storeName: 'db', secrets: [{ path: 'password', envVar: 'PASSWORD' }] }] },
      // The value is in the sandbox's Secret, the pod only refers to it.
      exhibits: {
        kubernetes: (l) =>
          isDeepStrictEqual(sandboxContainer(l).env?.find((e) => e.name === 'PASSWORD'), {
            name: 'PASSWORD',
            valueFrom: { secretKeyRef: { name: secretEnvSecretNameFor(l.pod.metadata?.name ?? ''), key: 'PASSWORD' } },
          }) &&
          Buffer.from(l.envSecret?.data?.PASSWORD ?? '', 'base64').toString('utf8') === secretValueOf('PASSWORD') &&
          !JSON.stringify(l.pod).includes(secretValueOf('PASSWORD')),
      },
    },
  ],
  'securityContext.allowPrivilegeEscalation': [{ c: { securityContext: { allowPrivilegeEscalation: true } } }],
  'securityContext.capabilitiesAdd': [
    // Refused at create on both: a local sandbox could not use it, a restricted pod may not have it.
    { c: { securityContext: { capabilitiesAdd: ['NET_ADMIN'] } }, field: 'securityContext.capabilitiesAdd[0]' },
    {
      c: { securityContext: { capabilitiesAdd: ['NET_BIND_SERVICE'] } },
      exhibits: {
        local: (l) => hasSequence(l.bwrap, ['--cap-add', 'CAP_NET_BIND_SERVICE']),
        kubernetes: (l) => sandboxContainer(l).securityContext?.capabilities?.add?.includes('NET_BIND_SERVICE') === true,
      },
    },
  ],
  'securityContext.capabilitiesDrop': [
    {
      c: { securityContext: { capabilitiesDrop: ['NET_RAW'] } },
      exhibits: {
        local: (l) => hasSequence(l.bwrap, ['--cap-drop', 'ALL']),
        kubernetes: (l) => sandboxContainer(l).securityContext?.capabilities?.drop?.includes('ALL') === true,
      },
    },
  ],
  'securityContext.privileged': [{ c: { securityContext: { privileged: true } } }],
  'securityContext.readOnlyRootFilesystem': [
    {
      c: { securityContext: { readOnlyRootFilesystem: true } },
      exhibits: {
        local: (l) => hasSequence(l.bwrap, ['--remount-ro', '/']),
        kubernetes: (l) => sandboxContainer(l).securityContext?.readOnlyRootFilesystem === true,
      },
    },
    { c: { securityContext: { readOnlyRootFilesystem: false } } },
  ],
  'securityContext.runAsGroup': [
    {
      c: { securityContext: { runAsGroup: 1000 } },
      exhibits: { local: (l) => hasSequence(l.bwrap, ['--gid', '1000']), kubernetes: (l) => sandboxContainer(l).securityContext?.runAsGroup === 1000 },
    },
  ],
  'securityContext.runAsUser': [
    {
      c: { securityContext: { runAsUser: 1000 } },
      exhibits: { local: (l) => hasSequence(l.bwrap, ['--uid', '1000']), kubernetes: (l) => sandboxContainer(l).securityContext?.runAsUser === 1000 },
    },
    // Root inside a local sandbox's user namespace (host uid 65534 outside); refused by a restricted pod.
    { c: { securityContext: { runAsUser: 0 } }, exhibits: { local: (l) => hasSequence(l.bwrap, ['--uid', '0']) } },
  ],
  'securityContext.seccompProfile': [
    { c: { securityContext: { seccompProfile: 'Unconfined' } } },
    {
      c: { securityContext: { seccompProfile: 'Localhost/profiles/strict.json' } },
      exhibits: {
        kubernetes: (l) => isDeepStrictEqual(sandboxContainer(l).securityContext?.seccompProfile, { type: 'Localhost', localhostProfile: 'profiles/strict.json' }),
      },
    },
    {
      c: { securityContext: { seccompProfile: 'RuntimeDefault' } },
      exhibits: {
        local: (l) => l.bwrap.includes('--seccomp'),
        kubernetes: (l) => sandboxContainer(l).securityContext?.seccompProfile?.type === 'RuntimeDefault',
      },
    },
  ],
  startupProbe: [{ c: { startupProbe: { httpGet: { port: 8000, path: '/' }, failureThreshold: 3 } } }],
  'volumeMounts[]': [
    {
      c: { volumeMounts: [{ volume: 'scratch', mountPath: '/data' }, { volume: 'scratch', mountPath: '/more' }] },
      without: { volumeMounts: [{ volume: 'scratch', mountPath: '/data' }] },
      volumes: SCRATCH,
      field: 'volumeMounts[1]',
    },
  ],
  'volumeMounts[].mountPath': [
    { c: { volumeMounts: [{ volume: 'scratch', mountPath: '/data' }] }, without: { volumeMounts: [{ volume: 'scratch', mountPath: '/elsewhere' }] }, volumes: SCRATCH },
  ],
  'volumeMounts[].volume': [{ c: { volumeMounts: [{ volume: 'scratch', mountPath: '/data' }] }, volumes: SCRATCH }],
  'volumeMounts[].readOnly': [
    {
      c: { volumeMounts: [{ volume: 'scratch', mountPath: '/data', readOnly: true }] },
      without: { volumeMounts: [{ volume: 'scratch', mountPath: '/data' }] },
      volumes: SCRATCH,
    },
  ],
  'volumeMounts[].subPath': [
    {
      c: { volumeMounts: [{ volume: 'scratch', mountPath: '/data', subPath: 'part' }] },
      without: { volumeMounts: [{ volume: 'scratch', mountPath: '/data' }] },
      volumes: SCRATCH,
    },
  ],
  workingDir: [{ c: { workingDir: '/workspace/sub' } }],
};

/** Two containers that differ, so which one is primary shows in the launch. */
const TWO: Container[] = [
  { name: 'app', command: ['sleep', '60'] },
  { name: 'side', command: ['sleep', '61'] },
];
const egress = (...rules: NonNullable<NonNullable<SandboxSpecInput['network']>['egress']>): SandboxSpecInput => ({ containers: [MAIN], network: { egress: rules } });
const ingress = (...rules: NonNullable<NonNullable<SandboxSpecInput['network']>['ingress']>): SandboxSpecInput => ({ containers: [MAIN], network: { ingress: rules } });
const net10 = { cidr: { cidr: '10.0.0.0/8' } };

const SPEC_SAMPLES: Record<string, Sample[]> = {
  annotations: [{ spec: { ...BASE, annotations: { team: 'ml' } }, exhibits: { kubernetes: (l) => l.pod.metadata?.annotations?.team === 'ml' } }],
  // Several containers need their primary named (by `primaryContainer` or `primary`), so each
  // baseline names it the other way, or names the other container: only the field under test differs.
  'containers[]': [{ spec: { containers: TWO, primaryContainer: 'app' }, without: { containers: [TWO[0] as Container], primaryContainer: 'app' }, field: 'containers[1]' }],
  'containers[].primary': [
    {
      spec: { containers: [TWO[0] as Container, { ...(TWO[1] as Container), primary: true }] },
      without: { containers: TWO, primaryContainer: 'app' },
      field: 'containers[1].primary',
    },
  ],
  primaryContainer: [{ spec: { containers: TWO, primaryContainer: 'side' }, without: { containers: [{ ...(TWO[0] as Container), primary: true }, TWO[1] as Container] } }],
  'initContainers[]': [
    {
      spec: { containers: [MAIN], initContainers: [{ name: 'one', command: ['true'] }, { name: 'two', command: ['true'] }] },
      without: { containers: [MAIN], initContainers: [{ name: 'one', command: ['true'] }] },
      field: 'initContainers[1]',
    },
  ],
  instanceType: [{ spec: { ...BASE, instanceType: 'gpu-small' } }],
  maxLifetimeSeconds: [{ spec: { ...BASE, maxLifetimeSeconds: 120 } }],
  mode: [{ spec: { ...BASE, mode: 'SANDBOX_MODE_CKS' }, steers: (r) => r.mode === 'SANDBOX_MODE_CKS' }],
  runnerIds: [{ spec: { ...BASE, mode: 'SANDBOX_MODE_CKS', runnerIds: ['r-1'] }, steers: (r) => r.runnerIds.includes('r-1') }],
  tags: [{ spec: { ...BASE, tags: ['nightly'] }, steers: (r) => r.tags.includes('nightly') }],
  'network.denyEgress': [{ spec: { ...BASE, network: { denyEgress: true } } }],
  'network.denyIngress': [
    {
      spec: { ...BASE, network: { denyIngress: true } },
      exhibits: {
        // No inbound path into a local sandbox: the runner's forward chain drops every new
        // connection towards a sandbox link (replies to its own connections excepted).
        local: () => baseTableScript({ table: 't', vethPrefix: 'pdkt', linkBlock: LINK_BLOCK }, '/run/t').includes('forward oifname "pdk*" drop'),
        kubernetes: (l) => l.networkPolicy.spec?.policyTypes?.includes('Ingress') === true && (l.networkPolicy.spec.ingress ?? []).length === 0,
      },
    },
  ],
  'network.dnsEgress': [{ spec: { ...BASE, network: { dnsEgress: 'DNS_EGRESS_MODE_DENY' } } }, { spec: { ...BASE, network: { dnsEgress: 'DNS_EGRESS_MODE_ALLOW' } } }],
  'network.egress[]': [
    { spec: egress(net10, { cidr: { cidr: '192.168.0.0/16' } }), without: egress(net10), field: 'network.egress[1]' },
  ],
  'network.egress[].any': [{ spec: egress({ any: true }) }],
  'network.egress[].cidr.cidr': [{ spec: egress(net10) }],
  'network.egress[].cidr.except': [{ spec: egress({ cidr: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }), without: egress(net10) }],
  'network.egress[].dnsName': [{ spec: egress({ dnsName: 'example.com' }) }],
  'network.egress[].dnsNameExcept': [{ spec: egress({ dnsName: '*.example.com', dnsNameExcept: ['a.example.com'] }), without: egress({ dnsName: '*.example.com' }) }],
  'network.egress[].httpsHostname': [{ spec: egress({ httpsHostname: 'example.com' }) }],
  'network.egress[].httpsHostnameExcept': [
    { spec: egress({ httpsHostname: '*.example.com', httpsHostnameExcept: ['a.example.com'] }), without: egress({ httpsHostname: '*.example.com' }) },
  ],
  'network.egress[].ports[]': [
    {
      spec: egress({ ...net10, ports: [{ port: 443 }, { port: 80 }] }),
      without: egress({ ...net10, ports: [{ port: 443 }] }),
      field: 'network.egress[0].ports[1]',
    },
  ],
  'network.egress[].ports[].port': [{ spec: egress({ ...net10, ports: [{ port: 443 }] }), without: egress(net10) }],
  'network.egress[].ports[].endPort': [{ spec: egress({ ...net10, ports: [{ port: 8000, endPort: 8080 }] }), without: egress({ ...net10, ports: [{ port: 8000 }] }) }],
  'network.egress[].ports[].protocol': [{ spec: egress({ ...net10, ports: [{ port: 53, protocol: 'UDP' }] }), without: egress({ ...net10, ports: [{ port: 53 }] }) }],
  'network.egress[].selector.namespaceLabels': [
    { spec: egress({ selector: { podLabels: { app: 'db' }, namespaceLabels: { team: 'a' } } }), without: egress({ selector: { podLabels: { app: 'db' } } }) },
  ],
  'network.egress[].selector.podLabels': [{ spec: egress({ selector: { podLabels: { app: 'db' } } }) }],
  'network.egress[].tenant': [{ spec: egress({ tenant: 'TENANT_SCOPE_SAME_ORG' }) }],
  'network.ingress[]': [{ spec: ingress(net10, { cidr: { cidr: '192.168.0.0/16' } }), without: ingress(net10), field: 'network.ingress[1]' }],
  'network.ingress[].any': [{ spec: ingress({ any: true }) }],
  'network.ingress[].cidr.cidr': [{ spec: ingress(net10) }],
  'network.ingress[].cidr.except': [{ spec: ingress({ cidr: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }), without: ingress(net10) }],
  'network.ingress[].ports[]': [
    { spec: ingress({ ...net10, ports: [{ port: 443 }, { port: 80 }] }), without: ingress({ ...net10, ports: [{ port: 443 }] }), field: 'network.ingress[0].ports[1]' },
  ],
  'network.ingress[].ports[].port': [{ spec: ingress({ ...net10, ports: [{ port: 443 }] }), without: ingress(net10) }],
  'network.ingress[].ports[].endPort': [{ spec: ingress({ ...net10, ports: [{ port: 8000, endPort: 8080 }] }), without: ingress({ ...net10, ports: [{ port: 8000 }] }) }],
  'network.ingress[].ports[].protocol': [{ spec: ingress({ ...net10, ports: [{ port: 53, protocol: 'UDP' }] }), without: ingress({ ...net10, ports: [{ port: 53 }] }) }],
  'network.ingress[].tenant': [{ spec: ingress({ tenant: 'TENANT_SCOPE_SAME_ORG' }) }],
  networkIds: [{ spec: { ...BASE, networkIds: ['net-1'] } }],
  objectStorageAccess: [{ spec: { ...BASE, objectStorageAccess: { bucket: 'datasets' } } }],
  runtimeClass: [{ spec: { ...BASE, runtimeClass: 'gvisor' } }],
  services: [
    {
      spec: { ...BASE, services: [{ name: 'web', port: 8000, visibility: 'VISIBILITY_PUBLIC' }] },
      field: 'services[0]',
      exhibits: {
        // A ClusterIP Service for the port, selecting this pod alone, and the relay admitted on it.
        kubernetes: (l) =>
          l.services.length === 1 &&
          l.services[0]?.spec?.type === 'ClusterIP' &&
          isDeepStrictEqual(l.services[0].spec.ports?.map((p) => [p.port, p.targetPort]), [[8000, 8000]]) &&
          l.services[0].spec.selector?.[SANDBOX_POD_LABEL] === l.pod.metadata?.labels?.[SANDBOX_POD_LABEL] &&
          isDeepStrictEqual(l.networkPolicy.spec?.ingress?.flatMap((r) => r.ports?.map((p) => p.port) ?? []), [8000]),
      },
    },
  ],
  'volumes[]': [
    {
      spec: { ...BASE, volumes: [...SCRATCH, { name: 'more', scratch: {} }] },
      without: { ...BASE, volumes: SCRATCH },
      field: 'volumes[1]',
    },
  ],
  'volumes[].name': [{ spec: { ...BASE, volumes: SCRATCH } }],
  // Against the same volume without the field, so the field itself (not the volume) must show.
  // A memory volume must have a size (it counts against the sandbox's memory), so both carry one.
  'volumes[].scratch.medium': [
    { spec: { ...BASE, volumes: [{ name: 'm', scratch: { medium: 'STORAGE_MEDIUM_MEMORY', size: '64Mi' } }] }, without: { ...BASE, volumes: [{ name: 'm', scratch: { size: '64Mi' } }] } },
  ],
  'volumes[].scratch.size': [{ spec: { ...BASE, volumes: [{ name: 's', scratch: { size: '1Gi' } }] }, without: { ...BASE, volumes: [{ name: 's', scratch: {} }] } }],
  'volumes[].scratch.restoreFromSnapshotId': [
    { spec: { ...BASE, volumes: [{ name: 's', scratch: { restoreFromSnapshotId: 'snap-1' } }] }, without: { ...BASE, volumes: [{ name: 's', scratch: {} }] } },
    // The sandbox's own disk is the volume a snapshot captures, and so the one it restores.
    { spec: { ...BASE, volumes: [{ name: 'workspace', scratch: { restoreFromSnapshotId: 'snap-1' } }] }, without: BASE },
  ],
  'volumes[].volumeId': [{ spec: { ...BASE, volumes: [{ name: 'v', volumeId: 'vol-1' }] } }],
};

/** Every sample, by schema path: the spec-level ones plus each container sample on both lists. */
function allSamples(): Map<string, Sample[]> {
  const out = new Map<string, Sample[]>(Object.entries(SPEC_SAMPLES));
  for (const [rel, samples] of Object.entries(CONTAINER_SAMPLES)) {
    if (!out.has(`containers[].${rel}`)) {
      out.set(
        `containers[].${rel}`,
        samples.map((s) => ({
          spec: { containers: [{ ...MAIN, ...s.c }], ...(s.volumes ? { volumes: s.volumes } : {}) },
          without: { containers: [{ ...MAIN, ...s.without }], ...(s.volumes ? { volumes: s.volumes } : {}) },
          ...(s.field ? { field: `containers[0].${s.field}` } : {}),
          ...(s.exhibits ? { exhibits: s.exhibits } : {}),
          ...(s.steers ? { steers: s.steers } : {}),
        })),
      );
    }
    // On an init container the field must show in the launch itself (no steering), or, for a
    // property the backend always gives, on the init container itself (its bwrap argv locally,
    // its entry in the pod's initContainers on Kubernetes).
    const init: Container = { name: 'setup', command: ['true'] };
    const onInit = (exhibit: ((l: Launched) => boolean) | undefined): ((l: Launched) => boolean) | undefined =>
      exhibit && ((l: Launched) => exhibit({ ...l, pod: { ...l.pod, spec: { ...l.pod.spec, containers: l.pod.spec?.initContainers ?? [] } } }));
    out.set(
      `initContainers[].${rel}`,
      samples.map((s) => {
        const local = s.exhibits?.local;
        const kubernetes = onInit(s.exhibits?.kubernetes);
        return {
          spec: { containers: [MAIN], initContainers: [{ ...init, ...(s.init ?? s.c) }], ...(s.volumes ? { volumes: s.volumes } : {}) },
          without: { containers: [MAIN], initContainers: [{ ...init, ...s.without }], ...(s.volumes ? { volumes: s.volumes } : {}) },
          ...(s.field ? { field: `initContainers[0].${s.field}` } : {}),
          ...(local || kubernetes
            ? { exhibits: { ...(local ? { local: (l: Launched) => local({ ...l, bwrap: initBwrapOf(l.launch) }) } : {}), ...(kubernetes ? { kubernetes } : {}) } }
            : {}),
        };
      }),
    );
  }
  return out;
}

/** A policy that allows everything the samples ask for, so only the runner can refuse them. */
const POLICY: Policy = {
  constraints: {
    resources: { maxCpu: '8', maxMemory: '16Gi', maxGpuCount: 4 },
    security: {
      allowPrivileged: true,
      allowedCapabilities: ['NET_ADMIN', 'NET_BIND_SERVICE'],
      allowedSeccompProfiles: ['RuntimeDefault', 'Unconfined', 'Localhost/profiles/strict.json'],
      allowedRuntimeClasses: ['gvisor'],
    },
    instance: { allowedInstanceTypes: ['gpu-small'] },
  },
};

const LINK_BLOCK = (() => {
  const b = parseIpv4Cidr('10.209.0.0/24');
  if (!b) throw new Error('link block');
  return b;
})();
const POD_OPTS: SandboxPodOptions = { namespace: 'sandboxes', allowedRuntimeClasses: ['gvisor'], gpuTypes: ['H100'], serviceRelay: relayPeerFor('runner-1', 'paddock-runner-runner-1', 'runner-1') };
const HOST_CAPS = { pidsMax: 256, diskBytes: 1 << 30, openFilesMax: 1024 };

const hasSequence = (args: string[], seq: string[]): boolean => args.some((_, i) => seq.every((s, j) => args[i + j] === s));
function sandboxContainer(l: Launched): k8s.V1Container {
  const c = l.pod.spec?.containers[0];
  if (!c) throw new Error('pod without a container');
  return c;
}

/** The first init container's bwrap argv, as the local backend builds it for the supervisor. */
function initBwrapOf(launch: LaunchSpec): string[] {
  const pod = buildPod({
    spec: launch,
    sandboxDir: '/run/paddock-every-field',
    diskDir: '/run/paddock-every-field/disk',
    net: undefined,
    resolveImage: () => ({ kind: 'host' }),
    knownImages: () => [],
  });
  const first = pod.fields.initContainers?.[0];
  if (!first) throw new Error('launch without an init container');
  return first.bwrap;
}

/** The value the gateway would have resolved for a secret env var (a stand-in, distinct per name). */
const secretValueOf = (name: string): string => `resolved-${name.toLowerCase()}-value`;

function launchOf(spec: SandboxSpecInput, resolved: ResolvedSandboxSpec): Launched {
  const parsed = SandboxSpecSchema.parse(spec);
  const primary = parsed.containers.find((c) => c.name === resolved.primaryContainer) ?? parsed.containers[0];
  const launch = toLaunchSpec({
    secretEnv: Object.fromEntries(secretEnvNamesOf(primary).map((n) => [n, secretValueOf(n)])),
    sandboxId: 'sbx-every-field',
    organizationId: 'org-1',
    runnerId: 'runner-1',
    spec: parsed,
    resolved,
    caps: HOST_CAPS,
    meta: {
      v: 1,
      organizationId: 'org-1',
      spec: parsed,
      labels: {},
      effective: effectiveFieldsOf(resolved),
      requestFingerprint: 'fingerprint',
      createTime: '2026-01-01T00:00:00Z',
      cpuMillis: 0,
      memoryBytes: 0,
    },
  });
  const pod = buildSandboxPod(launch, POD_OPTS);
  return {
    launch,
    bwrap: bwrapArgs(launch, { kind: 'host' }, '/run/paddock-every-field'),
    pod,
    networkPolicy: buildSandboxNetworkPolicy(launch, POD_OPTS),
    services: buildSandboxServices(launch, { name: pod.metadata?.name ?? '', namespace: POD_OPTS.namespace, labels: pod.metadata?.labels ?? {} }),
    envSecret: buildSecretEnvSecret(launch, podNameFor(launch.sandboxId), POD_OPTS.namespace, {}),
  };
}

/** What is compared between a sample and its baseline: everything but the echo of the request itself. */
function comparable(b: BackendName, l: Launched): unknown {
  if (b === 'local') {
    const { [SANDBOX_META_LABEL]: _meta, ...labels } = l.launch.labels;
    return { ...l.launch, labels };
  }
  const { [LAUNCH_LABELS_ANNOTATION]: _labels, ...annotations } = l.pod.metadata?.annotations ?? {};
  // Besides the manifests, the backend writes the launch's files into the running pod through exec.
  return { pod: { ...l.pod, metadata: { ...l.pod.metadata, annotations } }, networkPolicy: l.networkPolicy, services: l.services, envSecret: l.envSecret, files: l.launch.files };
}

/** A violation on `v` names `field` when it is that field or one that contains it. */
const names = (v: string, field: string): boolean => v === field || field.startsWith(`${v}.`) || field.startsWith(`${v}[`);

type Outcome = 'honoured' | 'refused';

/** The fields the runner's create-time checks (secret mappings, pod parts, what the backend cannot run as asked) refuse, or undefined when they admit the spec. */
function podViolationsOf(spec: SandboxSpecInput, resolved: ResolvedSandboxSpec, backend: SandboxBackend): string[] | undefined {
  const local = backend.kind === 'local';
  try {
    const parsed = SandboxSpecSchema.parse(spec);
    checkSecretStoreShapes(parsed);
    if (!local) checkPrimaryOnlyParts(parsed, Math.max(0, parsed.containers.findIndex((c) => c.name === resolved.primaryContainer)));
    // Both backends relay service ports (the Kubernetes one through the port's Service).
    checkPod(resolved, { portForward: true });
    checkLaunchViolations(resolved, launchOf(spec, resolved).launch, backend);
    return undefined;
  } catch (e) {
    if (e instanceof PaddockError) return e.violations.map((v) => v.field);
    throw e;
  }
}

/** The outcome of one sample on one backend, or the reason it has neither. */
function outcomeOf(b: BackendName, backend: SandboxBackend, path: string, s: Sample): { outcome: Outcome } | { problem: string } {
  const caps = backend.capabilities();
  const field = s.field ?? path.replaceAll('[]', '[0]');
  const res = resolveSandboxSpec({ policy: POLICY, spec: s.spec, capabilities: caps });
  if (!res.ok) {
    if (res.violations.some((v) => names(v.field, field))) return { outcome: 'refused' };
    return { problem: `refused, but no violation names ${field} (got ${res.violations.map((v) => `${v.field}: ${v.rule}`).join('; ')})` };
  }
  // The runner's own check at create, after the policy engine: what a pod's containers, volumes,
  // probes and services may hold on this backend (the local backend writes every container's files).
  const podRefusal = podViolationsOf(s.spec, res.resolved, backend);
  if (podRefusal) {
    if (podRefusal.some((v) => names(v, field))) return { outcome: 'refused' };
    return { problem: `refused at create, but no violation names ${field} (got ${podRefusal.join('; ')})` };
  }
  if (s.steers) return s.steers(res.resolved) ? { outcome: 'honoured' } : { problem: 'admitted, but the resolved spec does not carry it' };
  const launched = launchOf(s.spec, res.resolved);
  if (b === 'kubernetes') {
    const refused =
      refusedRuntimeClass(launched.launch, POD_OPTS) ??
      refusedGpuType(launched.launch, POD_OPTS);
    if (refused) return { problem: `admitted, then refused only at launch without naming the field: ${refused}` };
    // Whatever a field adds to the pod must keep it inside Pod Security `restricted` and the API schema.
    const invalid = [
      ...checkPodSecurityRestricted(launched.pod.spec as unknown as PodSpec),
      ...validateManifest(launched.pod),
      ...validateManifest(launched.networkPolicy),
      ...launched.services.flatMap((svc) => validateManifest(svc)),
      ...(launched.envSecret ? validateManifest(launched.envSecret) : []),
    ];
    if (invalid.length) return { problem: `admitted, but the generated manifests are not valid: ${invalid.join('; ')}` };
  }
  const exhibit = s.exhibits?.[b];
  if (exhibit) return exhibit(launched) ? { outcome: 'honoured' } : { problem: 'admitted, but the backend does not show what it asks for' };
  const base = resolveSandboxSpec({ policy: POLICY, spec: s.without ?? BASE, capabilities: caps });
  if (!base.ok) return { problem: `admitted, but its baseline is refused (${base.violations.map((v) => v.field).join(', ')}), so its effect cannot be shown` };
  if (isDeepStrictEqual(comparable(b, launched), comparable(b, launchOf(s.without ?? BASE, base.resolved)))) {
    return { problem: `admitted, but nothing the ${b} backend launches changes: honour it, or refuse it by name (declare no spec feature for it)` };
  }
  return { outcome: 'honoured' };
}

describe('every sandbox spec field is honoured or refused by name, on each backend', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'paddock-every-field-'));
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
  const backends: Record<BackendName, SandboxBackend> = {
    local: new LocalBackend({ runnerId: 'every-field', stateDir, images: { 'paddock/tools': { rootfs: join(stateDir, 'tools') } } }),
    kubernetes: (() => {
      const kubeConfig = new k8s.KubeConfig();
      kubeConfig.loadFromClusterAndUser({ name: 'unused', server: 'https://127.0.0.1:1', skipTLSVerify: true }, { name: 'unused' });
      return new KubernetesBackend({
        runnerId: 'every-field',
        namespace: POD_OPTS.namespace,
        kubeConfig,
        runtimeClasses: ['gvisor'],
        gpuTypes: ['H100'],
        maxGpuCount: 4,
      });
    })(),
  };
  const samples = allSamples();
  const paths = specFieldPaths();

  it('has samples for exactly the fields the schema declares', () => {
    expect(paths.length).toBeGreaterThan(100);
    const missing = paths.filter((p) => !samples.get(p)?.length);
    const stale = [...samples.keys()].filter((p) => !paths.includes(p));
    expect(missing, `fields of SandboxSpecSchema without a sample here (add one, with the outcome it gets on each backend): ${missing.join(', ')}`).toEqual([]);
    expect(stale, `samples for fields the schema no longer has: ${stale.join(', ')}`).toEqual([]);
  });

  it.each(BACKENDS)('%s: each field reaches the backend with an effect, or resolution refuses it naming the field', (b) => {
    const problems: string[] = [];
    const tally: Record<Outcome, number> = { honoured: 0, refused: 0 };
    for (const path of paths) {
      for (const s of samples.get(path) ?? []) {
        const r = outcomeOf(b, backends[b], path, s);
        if ('problem' in r) problems.push(`${path} ${JSON.stringify(s.spec)}: ${r.problem}`);
        else tally[r.outcome]++;
      }
    }
    expect(problems, `fields with neither outcome on the ${b} backend:\n${problems.join('\n')}`).toEqual([]);
    // Both outcomes occur: the baseline is honoured and what the backend lacks is refused.
    expect(tally.honoured).toBeGreaterThan(10);
    expect(tally.refused).toBeGreaterThan(10);
  });
});
