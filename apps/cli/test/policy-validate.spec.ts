import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../src/program';
import type { Io } from '../src/context';

function io(): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), readStdin: () => '', stdinIsTTY: false, stdoutIsTTY: false, env: {} };
}

describe('cwic sandbox runner policy validate (offline, same engine as the control plane)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cwic-validate-'));

  it('accepts the seed policy in snake_case YAML', async () => {
    const f = join(dir, 'ok.yaml');
    writeFileSync(f, 'display_name: default\nconstraints:\n  resources:\n    default_cpu: "1"\n    max_cpu: "4"\n    require_limits: true\n  lifecycle:\n    default_lifetime_seconds: 3600\n');
    const o = io();
    expect(await run(['sandbox', 'runner', 'policy', 'validate', '-f', f], o)).toBe(0);
    expect(o.out.join('')).toContain('policy is valid');
  });

  it('names every violated field and rule, exit 1', async () => {
    const f = join(dir, 'bad.yaml');
    writeFileSync(f, 'constraints:\n  resources:\n    max_cpu: "lots"\n  lifecycle:\n    default_lifetime_seconds: 9999999\n');
    const o = io();
    expect(await run(['sandbox', 'runner', 'policy', 'validate', '-f', f], o)).toBe(1);
    const err = o.err.join('');
    expect(err).toContain('constraints.resources.maxCpu');
    expect(err).toContain('constraints.lifecycle.defaultLifetimeSeconds');
  });

  it('refuses a YAML alias bomb quickly', async () => {
    const f = join(dir, 'bomb.yaml');
    writeFileSync(f, 'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n');
    const o = io();
    const t0 = Date.now();
    expect(await run(['sandbox', 'runner', 'policy', 'validate', '-f', f], o)).toBe(1);
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
