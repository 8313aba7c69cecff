import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Serves the built web console (`apps/console/dist`) at `/console/`, so the embedded default needs
 * no separate deployment: the console's own REST calls to this control plane are same-origin, and
 * it reaches the gateway at `gatewayUrl` (the gateway allows this origin through CORS). The
 * console uses only the public APIs; `/console/config.json` tells it where the gateway is.
 *
 * Unknown paths without a file extension get `index.html` (the console routes in the browser);
 * a missing build answers 404 saying how to build it.
 */
export interface ConsoleAssetsOptions {
  /** The console's build output; absent = not built. */
  dir: string;
  /** The gateway's URL as the browser reaches it. */
  gatewayUrl: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** The console's repository location, from this file in `apps/control-plane/{src,dist}/infrastructure/http/`. */
export const DEFAULT_CONSOLE_DIR = resolve(__dirname, '..', '..', '..', '..', 'console', 'dist');

/**
 * A token lives in the page's session storage, so the page may run only its own scripts and talk
 * only to this origin and the gateway; it may not be framed.
 */
export function consoleSecurityHeaders(gatewayUrl: string): Record<string, string> {
  const gw = new URL(gatewayUrl);
  const ws = `${gw.protocol === 'https:' ? 'wss:' : 'ws:'}//${gw.host}`;
  return {
    'content-security-policy': [
      "default-src 'self'",
      "script-src 'self'",
      // xterm.js and React set element styles at run time.
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      `connect-src 'self' ${gw.origin} ${ws}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ].join('; '),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}

/** The file a request path names inside `dir`, or null when it would leave it. */
export function resolveAssetPath(dir: string, requestPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(requestPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const root = resolve(dir);
  const file = resolve(root, `.${sep}${decoded}`);
  return file === root || file.startsWith(root + sep) ? file : null;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

export function installConsoleAssets(fastify: FastifyInstance, opts: ConsoleAssetsOptions): void {
  const headers = consoleSecurityHeaders(opts.gatewayUrl);
  const config = JSON.stringify({ gatewayUrl: opts.gatewayUrl.replace(/\/$/, '') });
  const send = (reply: FastifyReply, status: number, type: string, body: string | Buffer, cache: string): FastifyReply =>
    reply.code(status).headers(headers).header('content-type', type).header('cache-control', cache).send(body);

  fastify.get('/console', (_req, reply) => reply.redirect('/console/', 308));
  fastify.get('/console/config.json', (_req, reply) => send(reply, 200, CONTENT_TYPES['.json'] as string, config, 'no-store'));
  fastify.get<{ Params: { '*': string } }>('/console/*', async (req, reply) => {
    const index = join(opts.dir, 'index.html');
    if (!(await isFile(index))) {
      return send(reply, 404, CONTENT_TYPES['.txt'] as string, 'The console is not built: run `pnpm --filter @paddock/console build` (pnpm start does).\n', 'no-store');
    }
    const rel = req.params['*'];
    const file = resolveAssetPath(opts.dir, rel);
    if (file && (await isFile(file))) {
      // Vite names everything under assets/ by content hash: those never change.
      const cache = rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      return send(reply, 200, CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', await readFile(file), cache);
    }
    if (file === null || extname(rel) !== '') return send(reply, 404, CONTENT_TYPES['.txt'] as string, 'not found\n', 'no-store');
    return send(reply, 200, CONTENT_TYPES['.html'] as string, await readFile(index), 'no-cache');
  });
}
