import { createUser, encodeUser, fromSeed } from '@nats-io/jwt';
import { isValidNatsUserName, type NatsRole } from '@paddock/contracts';
import { formatCreds } from './creds';

export interface IssuedCreds {
  /** The `.creds` file's content (user JWT + user seed): a secret. */
  creds: string;
  jwt: string;
  /** The user's public key (what a revocation names). */
  publicKey: string;
  expiresAt?: Date;
}

export interface IssueOptions {
  /** Lifetime of the user JWT; none = it never expires (rotate by issuing a new one). */
  ttlSeconds?: number;
  now?: () => Date;
}

/**
 * Issues NATS users of the roles it holds a scoped signing key for. The user JWT carries no
 * permissions of its own: nats-server applies the template of the key that signed it (the role's
 * permissions from `@paddock/contracts`, scoped by the user's name). So whoever holds, say, only
 * the runner key can mint runners and nothing else: a leaked key cannot mint a gateway.
 *
 * @example
 * const issuer = new NatsUserIssuer(accountPublicKey, { runner: runnerSigningSeed });
 * const { creds } = await issuer.issue('runner', 'r1', { ttlSeconds: 3600 });
 */
export class NatsUserIssuer {
  constructor(
    readonly accountPublicKey: string,
    private readonly signingSeeds: Partial<Record<NatsRole, string>>,
  ) {}

  canIssue(role: NatsRole): boolean {
    return this.signingSeeds[role] !== undefined;
  }

  async issue(role: NatsRole, name: string, opts: IssueOptions = {}): Promise<IssuedCreds> {
    const seed = this.signingSeeds[role];
    if (!seed) throw new Error(`this issuer holds no signing key for the NATS role "${role}"`);
    if (!isValidNatsUserName(name)) {
      throw new Error(`NATS user name ${JSON.stringify(name)} is invalid: 1 to 128 of [A-Za-z0-9_-] (it is substituted into subjects)`);
    }
    const user = createUser();
    const now = opts.now?.() ?? new Date();
    const exp = opts.ttlSeconds ? Math.floor(now.getTime() / 1000) + Math.ceil(opts.ttlSeconds) : undefined;
    const jwt = await encodeUser(
      name,
      user,
      this.accountPublicKey,
      { tags: [`role:${role}`], bearer_token: false },
      { signer: fromSeed(new TextEncoder().encode(seed)), scopedUser: true, ...(exp ? { exp } : {}) },
    );
    return {
      creds: formatCreds(jwt, new TextDecoder().decode(user.getSeed())),
      jwt,
      publicKey: user.getPublicKey(),
      ...(exp ? { expiresAt: new Date(exp * 1000) } : {}),
    };
  }
}
