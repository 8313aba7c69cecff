import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createGatewayDb, type GatewayDatabase } from '../src/db/database';
import { migrateGatewayToLatest } from '../src/db/migrate';
import { SandboxRepository } from '../src/sandboxes/sandbox.repository';
import { startInfra, type Infra } from './support/infra';

/**
 * The runner's reply to a create and its RUNNING state event race: the event may be applied
 * first. The reply still carries the resolution (`effective*`), which must not be lost then.
 */
describe('gateway: the create reply after the RUNNING event', () => {
  let infra: Infra;
  let db: Kysely<GatewayDatabase>;

  beforeAll(async () => {
    infra = await startInfra();
    db = createGatewayDb(infra.databaseUrl, 2);
    await migrateGatewayToLatest(db);
  }, 120_000);

  afterAll(async () => {
    await db?.destroy();
    await infra?.stop();
  });

  it('keeps the state the event set and records the resolution the reply carries', async () => {
    const repo = new SandboxRepository(db);
    const orgId = (await infra.cp.createOrganization(`org-${randomUUID().slice(0, 8)}`)).id;
    const id = randomUUID();
    const placement = { decidedAt: new Date().toISOString(), candidates: ['r1'], verdicts: [], attempts: [], winner: null };
    await repo.insertPending({ id, organizationId: orgId, requestId: null, requestFingerprint: 'f', spec: {}, tags: [], runnerId: 'r1', runnerGroupId: 'default', placement, now: new Date() });
    const running = { state: 'STATE_RUNNING' as const, rank: 2, sequence: 5, at: new Date() };
    expect(await repo.applyObservation(id, 'r1', running)).toBe(true);
    const effective = { effectiveResources: { cpu: '500m', memory: '512Mi', gpuCount: 0 }, effectiveMaxLifetimeSeconds: 600 };
    const row = await repo.acceptPlacement(id, 'r1', { ...placement, winner: 'r1' }, { state: 'STATE_CREATING', rank: 1, sequence: 0, at: new Date(), effective }, new Date());
    expect(row?.state).toBe('STATE_RUNNING');
    expect(row?.effective).toEqual(effective);
    // A later, older reply does not overwrite what is recorded.
    const again = await repo.acceptPlacement(id, 'r1', { ...placement, winner: 'r1' }, { state: 'STATE_CREATING', rank: 1, sequence: 0, at: new Date(), effective: { effectiveMaxLifetimeSeconds: 1 } }, new Date());
    expect(again?.effective).toEqual(effective);
  });
});
