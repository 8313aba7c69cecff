import Fastify from 'fastify';
import { connectNats } from '@paddock/nats';
import { subjects } from '@paddock/contracts';

/**
 * Attribution floor for the exec overhead: the least a separate HTTP process in front of the
 * runner can cost. `POST /:runnerId/:organizationId/:sandboxId` relays `{command, timeoutSeconds}`
 * as one NATS exec request and returns the runner's result: no auth, no database, no Nest, no
 * validation. Started by bench/index.ts as its own process, like the gateway; prints its port.
 */
async function main(): Promise<void> {
  const nc = await connectNats({ servers: process.env.NATS_URL ?? '', credsFile: process.env.NATS_CREDS });
  const app = Fastify();
  app.post<{ Params: { runnerId: string; organizationId: string; sandboxId: string }; Body: { command: string[]; timeoutSeconds: number } }>(
    '/:runnerId/:organizationId/:sandboxId',
    async (req) => {
      const { runnerId, organizationId, sandboxId } = req.params;
      const request = { sandboxId, organizationId, argv: req.body.command, timeoutSeconds: req.body.timeoutSeconds };
      const msg = await nc.request(subjects.runnerRpc(runnerId, 'exec'), JSON.stringify(request), { timeout: 10_000 });
      return msg.json<{ result?: unknown }>().result;
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  process.stdout.write(`${typeof addr === 'object' && addr ? addr.port : 0}\n`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
