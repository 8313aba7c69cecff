/**
 * Pagination under writes: listing while 20 writers create and delete runners returns every runner that
 * exists for the whole scan exactly once; tampered, foreign, re-filtered and expired page tokens are
 * `invalid_argument`; a page size above 100 is coerced to 100.
 */
import { CommandBus } from '@nestjs/cqrs';
import type { ListManagedRunnersResponse } from '@paddock/contracts';
import { api, startTestApp, type TestApp } from '../support/app';
import type { ErrorBody } from '../support/errors';
import { installReport } from '../support/fixtures';
import { ClustersService } from '../../src/modules/clusters';
import type { Caller } from '../../src/modules/identity';
import { CreateManagedRunnerCommand } from '../../src/modules/runners/application/runner.commands';
import { parseCreateRunner } from '../../src/modules/runners/application/runner-input';
import { pageSizeOf } from '../../src/modules/runners/application/runner-queries';
import { report } from './support';

const STABLE = 105;
const WRITERS = 20;
const CYCLES = process.env.PADDOCK_SOAK ? 20 : 3;

let t: TestApp;
let caller: Caller;

/** In-process create (the REST path is covered elsewhere); each runner gets its own cluster. */
async function createQuick(runnerId: string, zone = 'us-east-1'): Promise<string> {
  const cluster = await t.app.get(ClustersService).register(caller.organizationId, { name: `cl-${runnerId}`, zone });
  const r = await t.app.get(CommandBus).execute(
    new CreateManagedRunnerCommand(caller, parseCreateRunner({ identity: { runnerId, zone, clusterId: cluster.cluster.id }, policy: {} }, {})),
  );
  return r.uid;
}

async function scan(query: string, token = t.adminToken): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pageToken = '';
  let pages = 0;
  do {
    const r = await api<ListManagedRunnersResponse>(t, 'GET', `/v1/sandbox/managedRunners?${query}${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`, { token });
    expect(r.status, r.text).toBe(200);
    ids.push(...r.body.managedRunners.map((m) => m.identity.runnerId));
    pageToken = r.body.nextPageToken;
    pages++;
  } while (pageToken);
  return { ids, pages };
}

beforeAll(async () => {
  t = await startTestApp();
  caller = { organizationId: t.organizationId, role: 'SANDBOX_ADMIN', tokenId: 'test', actor: 'test:pagination' };
  for (let i = 0; i < STABLE; i++) {
    await createQuick(`stable-${String(i).padStart(3, '0')}`);
    t.clock.advance(1);
  }
}, 120_000);
afterAll(async () => {
  await t?.close();
});

it(`every stable runner exactly once while ${WRITERS} writers create and delete`, async () => {
  let stop = false;
  let churn = 0;
  const writers = Array.from({ length: WRITERS }, async (_v, w) => {
    for (let c = 0; c < CYCLES && !stop; c++) {
      const runnerId = `churn-${w}-${c}`;
      const cluster = await t.app.get(ClustersService).register(caller.organizationId, { name: `churn-${w}-${c}`, zone: 'us-east-1' });
      await t.app.get(CommandBus).execute(
        new CreateManagedRunnerCommand(caller, parseCreateRunner({ identity: { runnerId, zone: 'us-east-1', clusterId: cluster.cluster.id }, policy: {} }, {})),
      );
      t.clock.advance(1);
      const del = await api(t, 'DELETE', `/v1/sandbox/managedRunners/${runnerId}`, { token: t.adminToken });
      expect(del.status).toBe(200);
      await report(t, installReport(t, runnerId, cluster.cluster.id, { gone: true, fencingToken: 1 }));
      churn++;
    }
  });
  const scans: { ids: string[]; pages: number }[] = [];
  const scanning = (async () => {
    for (let i = 0; i < 3; i++) scans.push(await scan('pageSize=7'));
  })();
  await scanning;
  stop = true;
  await Promise.all(writers);

  for (const s of scans) {
    const stable = s.ids.filter((id) => id.startsWith('stable-'));
    expect(new Set(stable).size).toBe(STABLE);
    expect(stable).toHaveLength(STABLE);
    expect(new Set(s.ids).size).toBe(s.ids.length);
    expect(s.pages).toBeGreaterThanOrEqual(Math.ceil(STABLE / 7));
  }
  expect(churn).toBeGreaterThan(0);
  // Every churned runner was removed from reads by its `gone` report.
  const after = await scan('pageSize=100');
  expect(after.ids.filter((id) => id.startsWith('churn-'))).toEqual([]);
  console.info(`API-6: ${scans.length} scans of ${STABLE} stable runners at pageSize 7 under ${churn} create/delete cycles by ${WRITERS} writers`);
}, 120_000);

it('coerces pageSize above 100 to 100, defaults to 50', async () => {
  const big = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners?pageSize=1000', { token: t.adminToken });
  expect(big.body.managedRunners).toHaveLength(100);
  expect(big.body.nextPageToken).not.toBe('');
  const dflt = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners', { token: t.adminToken });
  expect(dflt.body.managedRunners).toHaveLength(50);
  expect([pageSizeOf('101'), pageSizeOf('100'), pageSizeOf(undefined), pageSizeOf('0')]).toEqual([100, 100, 50, 50]);
  const negative = await api(t, 'GET', '/v1/sandbox/managedRunners?pageSize=-1', { token: t.adminToken });
  expect(negative.body).toMatchObject({ code: 'invalid_argument' });
});

describe('tampered page tokens are invalid_argument', () => {
  let token: string;
  beforeAll(async () => {
    const r = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners?pageSize=5&zone=us-east-1', { token: t.adminToken });
    token = r.body.nextPageToken;
    expect(token).not.toBe('');
  });

  const expectInvalid = async (query: string, authToken = t.adminToken): Promise<void> => {
    const r = await api<ErrorBody>(t, 'GET', `/v1/sandbox/managedRunners?${query}`, { token: authToken });
    expect(r.status, query).toBe(400);
    expect(r.body.code).toBe('invalid_argument');
    expect(r.body.details[1]?.fieldViolations?.[0]?.field).toBe('page_token');
  };

  it('every single-character flip', async () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    let flips = 0;
    for (let i = 0; i < token.length; i += token.length - i > 50 ? 3 : 1) {
      const c = token[i] as string;
      if (c === '.') continue;
      const swapped = alphabet[(alphabet.indexOf(c) + 1) % alphabet.length] as string;
      const tampered = token.slice(0, i) + swapped + token.slice(i + 1);
      await expectInvalid(`pageSize=5&zone=us-east-1&pageToken=${encodeURIComponent(tampered)}`);
      flips++;
    }
    expect(flips).toBeGreaterThan(20);
  });

  it('garbage, truncated and empty-signature tokens', async () => {
    for (const bad of ['x', 'a.b.c', `${token.split('.')[0] ?? ''}.`, token.slice(0, -4), '%%%']) {
      await expectInvalid(`pageSize=5&zone=us-east-1&pageToken=${encodeURIComponent(bad)}`);
    }
  });

  it('another organization and other filters', async () => {
    const other = await t.createOrganization('pagination-other');
    await expectInvalid(`pageSize=5&zone=us-east-1&pageToken=${encodeURIComponent(token)}`, other.adminToken);
    await expectInvalid(`pageSize=5&zone=eu-west-1&pageToken=${encodeURIComponent(token)}`);
    await expectInvalid(`pageSize=5&pageToken=${encodeURIComponent(token)}`);
  });

  it('expired after 24 hours', async () => {
    t.clock.advance(25 * 60 * 60 * 1000);
    await expectInvalid(`pageSize=5&zone=us-east-1&pageToken=${encodeURIComponent(token)}`);
  });
});
