import type { Duplex } from 'node:stream';
import { PaddockError, PortForwardRequestSchema, STREAM_CHUNK_BYTES, httpEndpointsOf, type StreamOpenedResponse } from '@paddock/contracts';
import type { SandboxBackend } from '../backend/sandbox-backend';
import { invalidRequest, toPaddockError } from '../service/errors';
import { execFailure, type SandboxService } from '../service/sandbox-service';
import type { StreamEndpoint } from './stream-endpoint';

/**
 * `portForward`: relays one TCP connection between a stream and a port inside the sandbox (the
 * gateway's service endpoints ride on it). Only a port the sandbox's spec makes public is
 * reachable, and only while the sandbox runs (a paused one is resumed first, as for exec); the
 * sandbox closing its side ends the stream. Bytes either way are traffic for the idle timeout, so
 * a sandbox serving requests is never paused as idle.
 */
export async function openPortForward(
  d: { service: SandboxService; backend: SandboxBackend },
  open: (streamId: string, initialCredit: number) => StreamEndpoint,
  body: unknown,
): Promise<StreamOpenedResponse> {
  const parsed = PortForwardRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(parsed.error);
  const req = parsed.data;
  const rec = await d.service.ensureRunning(req.organizationId, req.sandboxId);
  if (!httpEndpointsOf(rec.spec.services).some((e) => e.port === req.port)) {
    throw new PaddockError('failed_precondition', `port ${req.port} is not a public service of sandbox ${req.sandboxId}`, {
      reason: 'CWSANDBOX_INVALID_REQUEST',
      violations: [{ field: 'port', rule: 'public_service', description: 'a port the sandbox declares in services[] with VISIBILITY_PUBLIC' }],
    });
  }
  const connect = d.backend.connectPort?.bind(d.backend);
  if (!connect) throw new PaddockError('unimplemented', 'this runner cannot relay connections into its sandboxes', { reason: 'CWSANDBOX_INVALID_REQUEST' });
  const sock: Duplex = await connect(req.sandboxId, req.port).catch((e: unknown) => {
    throw execFailure(rec, e);
  });
  const ep = open(req.streamId, req.initialCredit);
  sock.on('error', () => undefined);
  ep.onFrame = ({ header, payload }) => {
    if (header.kind === 'stdin') {
      d.service.noteTraffic(req.sandboxId);
      sock.write(payload, () => ep.consumed(header.seq));
    }
    else if (header.kind === 'stdinEof') sock.end();
    else if (header.kind === 'cancel') sock.destroy();
  };
  ep.onClose = () => sock.destroy();
  void (async () => {
    try {
      for await (const chunk of sock as AsyncIterable<Buffer>) {
        d.service.noteTraffic(req.sandboxId);
        for (let off = 0; off < chunk.length; off += STREAM_CHUNK_BYTES) await ep.sendCredited({ kind: 'stdout' }, chunk.subarray(off, off + STREAM_CHUNK_BYTES));
      }
      ep.sendControl({ kind: 'eof' });
      ep.close();
    } catch (e) {
      sock.destroy();
      // The sandbox closing its side while the caller still sends (a server that answers without
      // reading the whole request) ends the connection; its answer has already gone out.
      const code = (e as NodeJS.ErrnoException).code;
      ep.sendControl(code === 'EPIPE' || code === 'ECONNRESET' ? { kind: 'eof' } : { kind: 'error', error: toPaddockError(e).toBody() });
      ep.close();
    }
  })();
  return { streamId: req.streamId, stdinCredit: ep.recvWindow };
}
