import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@paddock/testing';
import { ConfigFileWatcher, loadRunnerConfigFile, type LoadedConfig } from '../../src/config/runner-config-file';
import { parseRunnerEnv } from '../../src/config/env';
import { natsSettings } from '../../src/config/options';

describe('runner config file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paddock-runner-cfg-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads YAML with a policy, its etag, the revision and the identity', async () => {
    const path = join(dir, 'runner.yaml');
    writeFileSync(
      path,
      ['runnerId: r1', 'revision: 3', 'policyEtag: "e1"', 'policy:', '  constraints:', '    resources:', '      maxCpu: "2"', 'identity:', '  organizationId: org-1'].join('\n'),
    );
    const cfg = await loadRunnerConfigFile(path);
    expect(cfg.file).toMatchObject({ runnerId: 'r1', revision: 3, policyEtag: 'e1', identity: { organizationId: 'org-1' } });
    expect(cfg.file.policy).toEqual({ constraints: { resources: { maxCpu: '2' } } });
  });

  it('refuses a key it does not know by name (a writer with another shape, e.g. a flat identity), never drops it', async () => {
    const path = join(dir, 'runner.json');
    writeFileSync(path, JSON.stringify({ runnerId: 'r1', organizationId: 'org-1', nats: { url: 'nats://x:4222', password: 'p' } }));
    const err = await loadRunnerConfigFile(path).then(() => undefined, (e: unknown) => e as Error);
    expect(err?.message).toContain('(root): Unrecognized key: "organizationId"');
    expect(err?.message).toContain('nats: Unrecognized key: "password"');
  });

  it('carries the NATS server and the credentials file’s path (the local driver puts them here, not in the environment)', async () => {
    const path = join(dir, 'runner.json');
    writeFileSync(path, JSON.stringify({ runnerId: 'r1', nats: { url: 'nats://127.0.0.1:4333', credsFile: '/x/nats.creds' } }));
    const cfg = await loadRunnerConfigFile(path);
    expect(cfg.file.nats).toEqual({ url: 'nats://127.0.0.1:4333', credsFile: '/x/nats.creds' });
    const env = parseRunnerEnv({});
    if (!env.ok) throw new Error(env.errors.join('; '));
    expect(natsSettings(env.env, cfg.file)).toEqual({ natsUrl: 'nats://127.0.0.1:4333', natsCredsFile: '/x/nats.creds' });
    const withEnv = parseRunnerEnv({ NATS_URL: 'nats://dev:4222' });
    if (!withEnv.ok) throw new Error(withEnv.errors.join('; '));
    expect(natsSettings(withEnv.env, cfg.file)).toEqual({ natsUrl: 'nats://dev:4222', natsCredsFile: '/x/nats.creds' });
    expect(natsSettings(env.env, undefined)).toEqual({ natsUrl: 'nats://127.0.0.1:4222' });
  });

  it('names the invalid field of a bad file', async () => {
    const path = join(dir, 'runner.json');
    writeFileSync(path, JSON.stringify({ revision: -1, identity: { zone: '' } }));
    await expect(loadRunnerConfigFile(path)).rejects.toThrow(/revision: .*; identity\.zone: /);
  });

  it('sees an atomic rename-replace and keeps the last good config when a bad one arrives', async () => {
    const path = join(dir, 'runner.json');
    writeFileSync(path, JSON.stringify({ revision: 1 }));
    const seen: LoadedConfig[] = [];
    const errors: Error[] = [];
    const w = new ConfigFileWatcher(path, (c) => seen.push(c), (e) => errors.push(e), 50);
    const first = await w.start();
    expect(first?.file.revision).toBe(1);
    writeFileSync(join(dir, 'tmp'), JSON.stringify({ revision: 2, policyEtag: 'e2' }));
    renameSync(join(dir, 'tmp'), path);
    await waitFor(() => seen.length === 1, { what: 'renamed config applied' });
    expect(seen[0]?.file).toMatchObject({ revision: 2, policyEtag: 'e2' });
    writeFileSync(join(dir, 'tmp'), '{ not json');
    renameSync(join(dir, 'tmp'), path);
    await waitFor(() => errors.length >= 1, { what: 'bad config reported' });
    expect(seen).toHaveLength(1);
    w.stop();
  });
});

describe('runner environment', () => {
  it('applies defaults and lists every bad variable', () => {
    const ok = parseRunnerEnv({ PADDOCK_RUNNER_ID: 'r1' });
    expect(ok.ok && ok.env.PADDOCK_HEARTBEAT_INTERVAL_MS).toBe(5000);
    const bad = parseRunnerEnv({ PADDOCK_RUNNER_BACKEND: 'docker', PADDOCK_HEARTBEAT_INTERVAL_MS: '-1' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.join('\n')).toMatch(/PADDOCK_RUNNER_BACKEND[\s\S]*PADDOCK_HEARTBEAT_INTERVAL_MS/);
  });

  it('validates the kubernetes backend variables at startup, naming the variable and the rule', () => {
    const ok = parseRunnerEnv({ PADDOCK_RUNNER_BACKEND: 'kubernetes', PADDOCK_SANDBOX_NAMESPACE: 'team-a-sandboxes', PADDOCK_SANDBOX_RUNTIME_CLASS: 'gvisor' });
    expect(ok.ok && [ok.env.PADDOCK_SANDBOX_NAMESPACE, ok.env.PADDOCK_SANDBOX_RUNTIME_CLASS]).toEqual(['team-a-sandboxes', 'gvisor']);
    const classes = parseRunnerEnv({ PADDOCK_SANDBOX_RUNTIME_CLASSES: ' gvisor, kata ,', PADDOCK_SANDBOX_USER_NAMESPACES: 'false' });
    expect(classes.ok && [classes.env.PADDOCK_SANDBOX_RUNTIME_CLASSES, classes.env.PADDOCK_SANDBOX_USER_NAMESPACES]).toEqual([['gvisor', 'kata'], false]);
    const gpus = parseRunnerEnv({ PADDOCK_SANDBOX_MAX_GPUS: '4', PADDOCK_SANDBOX_GPU_RESOURCE: 'amd.com/gpu', PADDOCK_SANDBOX_GPU_TYPES: 'H100, A100', PADDOCK_SANDBOX_GPU_TYPE_LABEL: 'gpu.example/model' });
    expect(gpus.ok && [gpus.env.PADDOCK_SANDBOX_MAX_GPUS, gpus.env.PADDOCK_SANDBOX_GPU_RESOURCE, gpus.env.PADDOCK_SANDBOX_GPU_TYPES, gpus.env.PADDOCK_SANDBOX_GPU_TYPE_LABEL]).toEqual([
      4,
      'amd.com/gpu',
      ['H100', 'A100'],
      'gpu.example/model',
    ]);
    const defaults = parseRunnerEnv({});
    expect(defaults.ok && [defaults.env.PADDOCK_SANDBOX_MAX_GPUS, defaults.env.PADDOCK_SANDBOX_GPU_RESOURCE]).toEqual([0, 'nvidia.com/gpu']);
    expect(defaults.ok && [defaults.env.PADDOCK_SANDBOX_RUNTIME_CLASSES, defaults.env.PADDOCK_SANDBOX_USER_NAMESPACES]).toEqual([[], true]);
    const badClass = parseRunnerEnv({ PADDOCK_SANDBOX_RUNTIME_CLASSES: 'gvisor,Bad Class', PADDOCK_SANDBOX_USER_NAMESPACES: 'maybe' });
    expect(badClass.ok).toBe(false);
    if (!badClass.ok) expect(badClass.errors.join('\n')).toMatch(/PADDOCK_SANDBOX_RUNTIME_CLASSES\.1: each must be a RuntimeClass name[\s\S]*PADDOCK_SANDBOX_USER_NAMESPACES/);
    for (const namespace of ['Team_A', '-a', 'a'.repeat(64)]) {
      const bad = parseRunnerEnv({ PADDOCK_SANDBOX_NAMESPACE: namespace });
      expect(bad.ok).toBe(false);
      if (!bad.ok) expect(bad.errors.join('\n')).toMatch(/^PADDOCK_SANDBOX_NAMESPACE: must be a Kubernetes namespace name/);
    }
    // Every service reads an empty variable as unset (deploy tools render unset values as ""):
    // the namespace then is the default one.
    const empty = parseRunnerEnv({ PADDOCK_SANDBOX_NAMESPACE: '' });
    expect(empty.ok && empty.env.PADDOCK_SANDBOX_NAMESPACE).toBeUndefined();
  });
});
