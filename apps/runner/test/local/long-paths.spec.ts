import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_STATE_ROOT, destroyBackend, launchRunning, makeBackend, spec, type TestBackend } from './helpers';

/**
 * A runner deployed by the controller's local driver keeps its state deep in the controller's
 * state directory; the supervisor's control socket must still work when its path is longer than
 * sockaddr_un's 108 bytes (found by the e2e journeys: "AF_UNIX path too long").
 */
describe('local backend with a deep state directory', () => {
  let t: TestBackend;
  const deep = join(TEST_STATE_ROOT, `deep-${process.pid}`, 'controller-state-dir', 'runners', 'a-runner-with-a-long-id', 'state', 'nested-further');

  beforeAll(() => {
    mkdirSync(deep, { recursive: true, mode: 0o755 });
    t = makeBackend({ stateDir: deep });
  });

  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left.leftoverProcesses).toEqual([]);
  });

  it('launches, execs and reads files when the socket path exceeds 108 bytes', async () => {
    await launchRunning(t, spec('sandbox-with-a-rather-long-identifier-0001'));
    expect(Buffer.byteLength(join(deep, 'sandbox-with-a-rather-long-identifier-0001', 'sup.sock'))).toBeGreaterThan(108);
    const r = await t.backend.exec('sandbox-with-a-rather-long-identifier-0001', { argv: ['echo', 'deep'] });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toBe('deep\n');
    await t.backend.writeFile('sandbox-with-a-rather-long-identifier-0001', '/workspace/f.txt', Buffer.from('ok'));
    const chunks: Buffer[] = [];
    for await (const c of await t.backend.readFile('sandbox-with-a-rather-long-identifier-0001', '/workspace/f.txt')) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('ok');
  });
});
