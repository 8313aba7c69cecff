/**
 * The control plane's two hot paths with bare parts, on a raw Fastify server over its own pg pool
 * (statements prepared), to tell the API's own cost apart from the machine's:
 *
 * - `GET /bare/:id`: the runner row by (organization, runner id), one prepared statement, sent
 *   back as JSON: an HTTP request that waits once on Postgres, and nothing else;
 * - `PATCH /bare/:id`: the policy PATCH in its leanest possible shape: a raw Fastify route that parses
 * the JSON body and runs ONE prepared autocommit statement, which checks the etag on the runner
 * row, moves the runner's stream, inserts the event and updates the row RETURNING it. No Nest, no
 * authentication, no validation, no domain code, no read before the write. Its throughput is the
 * ceiling of an HTTP request plus one event-sourced commit on this machine.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { Pool } from 'pg';

const WRITE = `
  WITH runner AS (
    SELECT uid, 'managed_runner-' || uid AS stream_id FROM cp_runners
     WHERE organization_id = $1 AND runner_id = $2 AND policy_etag = $3 FOR UPDATE),
  moved AS (
    UPDATE es_streams SET stream_position = stream_position + 1, updated_at = now()
      FROM runner WHERE es_streams.stream_id = runner.stream_id RETURNING es_streams.stream_position, runner.uid, runner.stream_id),
  appended AS (
    INSERT INTO es_messages (stream_id, stream_type, stream_position, message_id, message_type, message_schema_version, message_data, message_metadata)
    SELECT moved.stream_id, 'managed_runner', moved.stream_position, $4::uuid, 'BarePolicyReplaced', 1, $5::jsonb, '{}'::jsonb FROM moved
    RETURNING global_position)
  UPDATE cp_runners SET policy = $5::jsonb, policy_etag = $6, stream_version = moved.stream_position, update_time = now()
    FROM moved WHERE cp_runners.uid = moved.uid RETURNING cp_runners.*`;

const READ = `SELECT * FROM cp_runners WHERE organization_id = $1 AND runner_id = $2`;

export interface BarePartsServer {
  port: number;
  close(): Promise<void>;
}

export async function startBarePartsServer(databaseUrl: string, organizationId: string): Promise<BarePartsServer> {
  const pool = new Pool({ connectionString: databaseUrl, max: 16 });
  const app = Fastify();
  app.get<{ Params: { id: string } }>('/bare/:id', async (req, reply) => {
    const read = await pool.query({ name: 'bare_read', text: READ, values: [organizationId, req.params.id] });
    return read.rows[0] ?? reply.code(404).send({ code: 'not_found' });
  });
  app.patch<{ Params: { id: string }; Body: { policy: unknown; etag: string } }>('/bare/:id', async (req, reply) => {
    const written = await pool.query({
      name: 'bare_write',
      text: WRITE,
      values: [organizationId, req.params.id, req.body.etag, randomUUID(), JSON.stringify(req.body.policy), randomUUID()],
    });
    // No row: unknown runner or stale etag (the bench never sends either).
    if (written.rows.length === 0) return reply.code(400).send({ code: 'failed_precondition' });
    return written.rows[0];
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    port: (app.server.address() as AddressInfo).port,
    async close() {
      await app.close();
      await pool.end();
    },
  };
}
