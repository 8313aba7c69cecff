/**
 * go-plugin's handshake, as Terraform speaks it. Terraform starts a provider with a magic cookie
 * in the environment (a plugin refuses to run without it), the protocol versions it accepts,
 * and its client certificate for mutual TLS. The provider answers with one line on stdout:
 * `CORE-PROTOCOL|APP-PROTOCOL|NETWORK|ADDRESS|PROTOCOL|SERVER-CERT`, the certificate being the
 * base64 of its DER without padding.
 */
export const MAGIC_COOKIE_KEY = 'TF_PLUGIN_MAGIC_COOKIE';
export const MAGIC_COOKIE_VALUE = 'd602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2';
const CORE_PROTOCOL_VERSION = 1;
export const PLUGIN_PROTOCOL_VERSION = 6;

export type HandshakeCheck = { ok: true; clientCertPem: string } | { ok: false; message: string };

export function checkHandshakeEnv(env: Record<string, string | undefined>): HandshakeCheck {
  if (env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) {
    return {
      ok: false,
      message:
        'This binary is a Terraform plugin (the coreweave provider). It is not meant to be run directly: Terraform starts it. Install it with `pnpm terraform:install` and run terraform init.',
    };
  }
  const versions = (env.PLUGIN_PROTOCOL_VERSIONS ?? String(PLUGIN_PROTOCOL_VERSION)).split(',').map((v) => v.trim());
  if (!versions.includes(String(PLUGIN_PROTOCOL_VERSION))) {
    return { ok: false, message: `This provider speaks plugin protocol ${PLUGIN_PROTOCOL_VERSION}; this Terraform offers ${versions.join(', ')}. Use Terraform 1.0 or later.` };
  }
  const clientCertPem = env.PLUGIN_CLIENT_CERT;
  if (!clientCertPem) {
    return { ok: false, message: 'PLUGIN_CLIENT_CERT is not set: Terraform always passes its client certificate, and this provider serves only over mutual TLS.' };
  }
  return { ok: true, clientCertPem };
}

export function handshakeLine(socketPath: string, serverCertDer: Uint8Array): string {
  const cert = Buffer.from(serverCertDer).toString('base64').replace(/=+$/, '');
  return `${CORE_PROTOCOL_VERSION}|${PLUGIN_PROTOCOL_VERSION}|unix|${socketPath}|grpc|${cert}\n`;
}
