import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedRunnerYaml } from '@paddock/testing';
import { main, type CliIo } from '../src/cli';

function memoryIo(files: Record<string, string>): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (s: string) => {
      io.out += s;
    },
    stderr: (s: string) => {
      io.err += s;
    },
    readFile: (p: string) => {
      const f = files[p];
      if (f === undefined) throw new Error(`ENOENT: ${p}`);
      return f;
    },
  };
  return io;
}

/** `validate` on success: the validated policy (the fields these tests read). */
interface ValidateOutput {
  ok: boolean;
  policy: { displayName?: string; constraints: { resources: { maxCpu: string } } };
}

/** `resolve` on success: the resolved spec (the fields these tests read). */
interface ResolveOutput {
  ok: boolean;
  resolved: {
    lifetimeSeconds: number;
    containers: { resources: { requests: { memoryBytes: number } } }[];
  };
}

/** Any rejection: `{ ok: false, violations }`. */
interface RejectOutput {
  ok: false;
  violations: { field: string; rule: string; description: string }[];
}

/** The seed's whole runner.yaml: the CLI reads its policy section. */
const RUNNER_YAML = seedRunnerYaml('c');

describe('paddock-policy CLI (main)', () => {
  it('validate: a whole runner.yaml validates (exit 0, policy as JSON)', () => {
    const io = memoryIo({ 'runner.yaml': RUNNER_YAML });
    expect(main(['validate', 'runner.yaml'], io)).toBe(0);
    const out = JSON.parse(io.out) as ValidateOutput;
    expect(out.ok).toBe(true);
    expect(out.policy.constraints.resources.maxCpu).toBe('4');
  });

  it('validate: a bad policy exits 1 with JSON violations and readable lines', () => {
    const io = memoryIo({
      'p.json': '{"constraints": {"network": {"defaultEgress": [{"httpsHostname": "pypi.org"}]}}}',
    });
    expect(main(['validate', 'p.json'], io)).toBe(1);
    expect((JSON.parse(io.out) as RejectOutput).violations[0]?.rule).toBe('default_egress_hostname');
    expect(io.err).toContain(
      'p.json: constraints.network.defaultEgress[0].httpsHostname: default_egress must not contain DNS-name destinations [default_egress_hostname]',
    );
  });

  it('validate: a parser bomb is a rejection (exit 1), not a crash', () => {
    const io = memoryIo({ 'bomb.yaml': 'a: &a [1]\nb: *a\n' });
    expect(main(['validate', 'bomb.yaml'], io)).toBe(1);
    expect((JSON.parse(io.out) as RejectOutput).violations[0]?.rule).toBe('alias_refused');
  });

  it('resolve: spec over a YAML policy prints the resolved spec', () => {
    const io = memoryIo({
      'runner.yaml': RUNNER_YAML,
      'spec.yaml': 'containers:\n  - image: python:3.12\nmax_lifetime_seconds: 120\n',
    });
    expect(main(['resolve', '--policy', 'runner.yaml', '--spec', 'spec.yaml'], io)).toBe(0);
    const out = JSON.parse(io.out) as ResolveOutput;
    expect(out.resolved.lifetimeSeconds).toBe(120);
    expect(out.resolved.containers[0]?.resources.requests.memoryBytes).toBe(2 * 1024 ** 3);
  });

  it('resolve: a violation exits 1 with the actionable message', () => {
    const io = memoryIo({
      'runner.yaml': RUNNER_YAML,
      's.json': '{"containers": [{"image": "x", "resources": {"cpu": "8", "memory": "1Gi"}}]}',
    });
    expect(main(['resolve', '--policy=runner.yaml', '--spec=s.json'], io)).toBe(1);
    expect(io.err).toContain(
      'containers[0].resources.cpu: requested 8 exceeds the policy maximum 4 (constraints.resources.maxCpu) [max_cpu]',
    );
  });

  it('resolve: capabilities are read and enforced; without --policy the default policy applies', () => {
    const caps = JSON.stringify({
      isolation: 'namespaces',
      egress_rule_kinds: [],
      ingress_rule_kinds: [],
      supports_egress: false,
      runtime_classes: [],
      gpu_types: [],
      architectures: ['amd64'],
      instance_types: [],
      storage_media: ['STORAGE_MEDIUM_DISK'],
      supports_privileged: false,
    });
    const io = memoryIo({
      'caps.json': caps,
      's.json': '{"network": {"egress": [{"any": true}]}}',
    });
    expect(main(['resolve', '--spec', 's.json', '--capabilities', 'caps.json'], io)).toBe(1);
    const rules = (JSON.parse(io.out) as RejectOutput).violations.map((v) => v.rule);
    expect(rules).toContain('runner_capability');
  });

  it('usage errors exit 2', () => {
    expect(main([], memoryIo({}))).toBe(2);
    expect(main(['frobnicate'], memoryIo({}))).toBe(2);
    expect(main(['validate'], memoryIo({}))).toBe(2);
    expect(main(['resolve', '--policy', 'p'], memoryIo({}))).toBe(2);
    expect(main(['resolve', '--spec', 'missing.json'], memoryIo({}))).toBe(2);
    expect(main(['resolve', '--bogus', 'x'], memoryIo({}))).toBe(2);
    const io = memoryIo({});
    expect(main(['--help'], io)).toBe(0);
    expect(io.out).toContain('paddock-policy validate FILE');
  });
});

describe('paddock-policy CLI (real process via tsx)', () => {
  it('validates a file and exits with the right codes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-policy-cli-'));
    writeFileSync(join(dir, 'runner.yaml'), RUNNER_YAML);
    writeFileSync(join(dir, 'bad.yaml'), 'constraints:\n  resources:\n    max_cpu: lots\n');
    const cli = join(__dirname, '..', 'src', 'cli.ts');
    const run = (args: string[]) =>
      spawnSync(
        process.execPath,
        ['--conditions=@paddock/source', '--import', 'tsx', cli, ...args],
        { encoding: 'utf8', timeout: 90_000 },
      );
    const good = run(['validate', join(dir, 'runner.yaml')]);
    expect(good.status).toBe(0);
    expect((JSON.parse(good.stdout) as ValidateOutput).policy.displayName).toBe('default');
    const bad = run(['validate', join(dir, 'bad.yaml')]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      'constraints.resources.maxCpu: invalid Kubernetes quantity "lots"',
    );
    expect(run(['nope']).status).toBe(2);
  }, 180_000);
});
