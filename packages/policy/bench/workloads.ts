import type { Policy } from '@paddock/contracts';

/** A production-like policy: every group set, an egress envelope with a few rules. */
export const REALISTIC_POLICY: Policy = {
  displayName: 'Data science, GPU',
  base: {
    schedulerName: 'default-scheduler',
    tolerations: [{ key: 'gpu', operator: 'Exists' }],
    metadata: { annotations: { 'paddock.dev/tier': 'gold' } },
  },
  constraints: {
    resources: {
      defaultCpu: '1',
      defaultMemory: '2Gi',
      maxCpu: '16',
      maxMemory: '128Gi',
      maxGpuCount: 2,
      cpuCeiling: '32',
      memoryCeiling: '256Gi',
      requireLimits: true,
    },
    image: { allowedRegistries: ['ghcr.io/acme', 'docker.io/library'] },
    network: {
      allowedEgress: [
        { cidr: { cidr: '0.0.0.0/0', except: ['169.254.169.254/32', '10.0.0.0/8'] } },
        { httpsHostname: '*.pypi.org' },
        { httpsHostname: 'pypi.org' },
        { tenant: 'TENANT_SCOPE_SAME_ORG' },
      ],
      defaultEgress: [
        { cidr: { cidr: '0.0.0.0/0', except: ['169.254.169.254/32', '10.0.0.0/8'] } },
      ],
    },
    security: {
      allowedCapabilities: ['NET_BIND_SERVICE'],
      allowedSeccompProfiles: ['RuntimeDefault'],
      allowedRuntimeClasses: ['kata-qemu'],
      defaultCpuRuntimeClass: 'kata-qemu',
    },
    instance: { allowedInstanceTypes: ['h100', 'cpu-large'] },
    lifecycle: { defaultLifetimeSeconds: 3600 },
    metadata: {
      deniedAnnotationPrefixes: ['kubernetes.io/', 'paddock.dev/'],
      maxAnnotationCount: 32,
    },
    volumes: { allowedMedia: ['STORAGE_MEDIUM_DISK', 'STORAGE_MEDIUM_MEMORY'], maxSize: '100Gi' },
  },
};

/** A typical create: one container with resources, env, a scratch volume, two egress rules. */
export const REALISTIC_SPEC = {
  containers: [
    {
      name: 'main',
      image: 'ghcr.io/acme/trainer:1.4.2',
      command: 'python',
      args: ['-m', 'train', '--epochs', '3'],
      environmentVariables: { PYTHONUNBUFFERED: '1', WANDB_PROJECT: 'demo' },
      resourceRequirements: {
        requests: { cpu: '2', memory: '8Gi' },
        limits: { cpu: '4', memory: '16Gi' },
      },
      securityContext: { runAsUser: 1000, capabilitiesDrop: ['ALL'] },
      volumeMounts: [{ volume: 'data', mountPath: '/data' }],
    },
  ],
  volumes: [{ name: 'data', scratch: { size: '20Gi' } }],
  maxLifetimeSeconds: 7200,
  network: {
    egress: [
      { cidr: { cidr: '203.0.113.0/24' }, ports: [{ protocol: 'TCP', port: 443 }] },
      { httpsHostname: 'files.pypi.org' },
    ],
  },
  annotations: { 'acme.com/owner': 'ml-team' },
  tags: ['training'],
};

/** A valid policy whose encoded size is close to `bytes`: a large, non-redundant egress envelope. */
export function policyOfSize(bytes: number): Policy {
  const allowedEgress: NonNullable<NonNullable<Policy['constraints']>['network']>['allowedEgress'] =
    [];
  const policy: Policy = { displayName: 'large', constraints: { network: { allowedEgress } } };
  let i = 0;
  let size = JSON.stringify(policy).length;
  for (;;) {
    const rule =
      i % 3 === 0
        ? {
            cidr: {
              cidr: `10.${(i >> 8) & 255}.${i & 255}.0/24`,
              except: [`10.${(i >> 8) & 255}.${i & 255}.128/25`],
            },
            ports: [{ protocol: 'TCP' as const, port: 443 }],
          }
        : i % 3 === 1
          ? { httpsHostname: `svc-${i}.example.com` }
          : { cidr: { cidr: `2001:db8:${i.toString(16)}::/48` } };
    const add = JSON.stringify(rule).length + 1;
    if (size + add > bytes) break;
    allowedEgress.push(rule);
    size += add;
    i++;
  }
  return policy;
}
