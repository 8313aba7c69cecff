import { SandboxSpecSchema, DEFAULT_CONTAINER_NAME } from '../src/sandbox-spec';

describe('SandboxSpecSchema (structural)', () => {
  it('makes {} a valid request with one default container named main', () => {
    const s = SandboxSpecSchema.parse({});
    expect(s.containers).toEqual([{ name: DEFAULT_CONTAINER_NAME }]);
    expect(DEFAULT_CONTAINER_NAME).toBe('main');
  });

  it('accepts the product shape (resources, GPU, network, volumes, int64 strings)', () => {
    const s = SandboxSpecSchema.parse({
      containers: [
        {
          name: 'main',
          image: 'python:3.12',
          command: 'python',
          args: ['-c', 'print(1)'],
          environmentVariables: { A: '1' },
          resources: { cpu: '2', memory: '4Gi', gpu: { count: '1', type: 'H100' } },
          files: [{ path: '/a', content: 'aGk=' }],
        },
      ],
      maxLifetimeSeconds: '3600',
      network: { egress: [{ httpsHostname: 'pypi.org' }], denyIngress: true },
      volumes: [{ name: 'shm', scratch: { medium: 'STORAGE_MEDIUM_MEMORY', size: '50%' } }],
      mode: 'SANDBOX_MODE_CKS',
      runnerIds: ['r1'],
    });
    expect(s.maxLifetimeSeconds).toBe(3600);
    expect(s.containers[0]?.resources?.gpu?.count).toBe(1);
  });

  it('refuses unknown fields and bad enums', () => {
    expect(SandboxSpecSchema.safeParse({ maxLifetime: 1 }).success).toBe(false);
    expect(SandboxSpecSchema.safeParse({ mode: 'SANDBOX_MODE_MAGIC' }).success).toBe(false);
  });
});
