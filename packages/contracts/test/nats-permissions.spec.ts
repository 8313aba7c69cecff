import { NATS_ROLES, isValidNatsUserName, natsRolePermissions, subjects } from '../src';

/** The permission table is derived from the subject builders: these pin what each role may do. */
describe('NATS role permissions', () => {
  it('a runner publishes only its own events and stream output, and subscribes only to its own RPCs and stream input', () => {
    const p = natsRolePermissions('runner', 'r1');
    expect(p.publish).toEqual([subjects.runnerHeartbeat('r1'), subjects.sandboxState('r1'), 'stream.runner.v1.r1.*.out']);
    expect(p.subscribe).toEqual([subjects.runnerRpcAll('r1'), 'stream.runner.v1.r1.*.in']);
    expect(p.respond).toBe(true);
    expect(p.inboxPrefix).toBeUndefined();
  });

  it('no role may touch every inbox, and each requesting role has an inbox prefix of its own', () => {
    for (const role of NATS_ROLES) {
      const p = natsRolePermissions(role, 'x');
      for (const s of [...p.publish, ...p.subscribe]) {
        expect(s.startsWith('_INBOX.') ? s.startsWith(`_INBOX.${role}.x.`) : true).toBe(true);
        expect(s).not.toBe('>');
      }
      if (p.inboxPrefix) expect(p.subscribe).toContain(`${p.inboxPrefix}.>`);
    }
  });

  it('templates carry the placeholder nats-server fills with the user name', () => {
    expect(natsRolePermissions('controller').publish).toEqual(['evt.controller.v1.{{name()}}.install', 'rpc.cp.v1.cluster.{{name()}}.runnerCredentials']);
  });

  it('user names that would widen a subject are refused', () => {
    for (const bad of ['*', '>', 'a.b', '', 'a b', 'x'.repeat(129)]) expect(isValidNatsUserName(bad)).toBe(false);
    for (const good of ['local', 'prod-us-east-1', '3f2a1b7c-0000-4000-8000-000000000000']) expect(isValidNatsUserName(good)).toBe(true);
  });
});
