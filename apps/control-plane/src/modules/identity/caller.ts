export const ROLES = ['SANDBOX_ADMIN', 'SANDBOX_USER'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling: resolved from the bearer token by the global guard. */
export interface Caller {
  organizationId: string;
  role: Role;
  tokenId: string;
  /** Audit identity written to event metadata, e.g. `token:<tokenId>`. */
  actor: string;
}

/** What the guard actually attaches; a superset of {@link Caller}. */
export interface AuthenticatedCaller extends Caller {
  tokenName: string;
  /** Admins of the operator organization (created at first start) may call operator endpoints. */
  operator: boolean;
}

/** SANDBOX_ADMIN implies SANDBOX_USER: an admin can do everything a user can. */
export function roleSatisfies(held: Role, required: Role): boolean {
  return held === required || (held === 'SANDBOX_ADMIN' && required === 'SANDBOX_USER');
}
