import { decode, fmtCreds, fromSeed, type ClaimsData, type User } from '@nats-io/jwt';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';

/** What a `.creds` file says about its user (read from the JWT; the signature is checked by the server). */
export interface CredsInfo {
  jwt: string;
  /** The user's name: the runner id, cluster id… that its role's permissions are scoped by. */
  name: string;
  /** The role the issuer tagged the user with (`role:<role>`), if any. */
  role?: string;
  /** Public key of the account the user belongs to. */
  account: string;
  publicKey: string;
  issuedAt: Date;
  expiresAt?: Date;
}

const JWT_BLOCK = /-----BEGIN NATS USER JWT-----\s*([A-Za-z0-9_.=-]+)\s*------END NATS USER JWT------/;

/** A `.creds` file's text for a user JWT and the user's nkey seed. */
export function formatCreds(jwt: string, userSeed: string): string {
  return new TextDecoder().decode(fmtCreds(jwt, fromSeed(new TextEncoder().encode(userSeed))));
}

/** Reads the user JWT out of a `.creds` text. Throws, naming `source`, when there is none. */
export function credsInfo(creds: string, source = 'credentials'): CredsInfo {
  const m = JWT_BLOCK.exec(creds);
  if (!m?.[1]) throw new Error(`${source}: not a NATS credentials file (no "BEGIN NATS USER JWT" block)`);
  let claims: ClaimsData<User>;
  try {
    claims = decode<User>(m[1]);
  } catch (e) {
    throw new Error(`${source}: the user JWT cannot be decoded (${e instanceof Error ? e.message : String(e)})`);
  }
  const role = claims.nats.tags?.find((t) => t.startsWith('role:'))?.slice('role:'.length);
  return {
    jwt: m[1],
    name: claims.name,
    ...(role ? { role } : {}),
    account: claims.nats.issuer_account ?? claims.iss,
    publicKey: claims.sub,
    issuedAt: new Date(claims.iat * 1000),
    ...(claims.exp ? { expiresAt: new Date(claims.exp * 1000) } : {}),
  };
}

/**
 * True once half of the user's lifetime is gone: when whoever delivers these credentials should
 * issue new ones, leaving the other half for the delivery (a Kubernetes Secret reaches a mounted
 * file within about a minute) and for the process to pick them up at its next reconnect.
 */
export function renewalDue(info: Pick<CredsInfo, 'issuedAt' | 'expiresAt'>, now: Date = new Date()): boolean {
  if (!info.expiresAt) return false;
  const half = (info.expiresAt.getTime() - info.issuedAt.getTime()) / 2;
  return now.getTime() >= info.issuedAt.getTime() + half;
}

/**
 * Reads a credentials file that must be private to its owner: a file that others on the machine
 * can read (any "other" permission bit) is refused, naming the file and its mode. Group read stays
 * allowed: a Kubernetes Secret volume is made readable through the pod's fsGroup.
 */
export function readCredsFile(path: string): Uint8Array {
  return readPrivateFile(path, 'NATS credentials file');
}

/** Reads a secret file (`what` names it in errors), refusing it when other users can access it. */
export function readPrivateFile(path: string, what: string): Uint8Array {
  const st = statSync(path);
  if ((st.mode & 0o007) !== 0) {
    throw new Error(`${what} ${path} is accessible to other users (mode ${(st.mode & 0o777).toString(8)}); make it private: chmod 600 ${path}`);
  }
  return readFileSync(path);
}

/**
 * Writes a secret file atomically with mode 0600: a reader sees the old content or the new one,
 * never a partial file, and the file is never readable by others even for an instant.
 */
export function writeSecretFile(path: string, content: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
