import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { PaddockError } from '@paddock/contracts';
import type { FastifyRequest } from 'fastify';
import { OPERATOR_ONLY, PUBLIC_ROUTE, REQUIRED_ROLE, type RequestWithCaller } from './auth.decorators';
import { roleSatisfies, type AuthenticatedCaller, type Role } from './caller';
import { TokenVerifier } from './token-verifier';

/**
 * One message for malformed, unknown and revoked tokens, so a response never tells an attacker
 * which of the three it hit. A missing header gets its own, more helpful text:
 * it reveals nothing about any token.
 */
export const INVALID_TOKEN_MESSAGE = 'the API token is invalid, unknown or revoked; create a new one with POST /v1/tokens';
export const MISSING_TOKEN_MESSAGE = 'request has no API token; send "Authorization: Bearer <token>"';

const unauthenticated = (message: string): PaddockError => new PaddockError('unauthenticated', message);

/** What a route asks of its caller, read from its decorators (handler over class). */
interface RouteAccess {
  public: boolean;
  role: Role | undefined;
  operatorOnly: boolean;
}

@Injectable()
export class AuthGuard implements CanActivate {
  /**
   * Decorators never change at run time: each route's access is read once, not per request.
   * Keyed by class, then handler: an inherited handler may serve classes decorated differently.
   */
  private readonly access = new WeakMap<object, WeakMap<object, RouteAccess>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: TokenVerifier,
  ) {}

  private accessOf(ctx: ExecutionContext): RouteAccess {
    const handler = ctx.getHandler();
    const cls = ctx.getClass();
    let byHandler = this.access.get(cls);
    if (!byHandler) this.access.set(cls, (byHandler = new WeakMap()));
    let access = byHandler.get(handler);
    if (!access) {
      const targets = [handler, cls];
      access = {
        public: this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, targets) === true,
        role: this.reflector.getAllAndOverride<Role | undefined>(REQUIRED_ROLE, targets),
        operatorOnly: this.reflector.getAllAndOverride<boolean | undefined>(OPERATOR_ONLY, targets) === true,
      };
      byHandler.set(handler, access);
    }
    return access;
  }

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const access = this.accessOf(ctx);
    if (access.public) return true;
    const req = ctx.switchToHttp().getRequest<FastifyRequest & RequestWithCaller>();
    req.paddockCaller = await authenticate(this.verifier, req.headers.authorization, access.role, access.operatorOnly);
    return true;
  }
}

/**
 * The caller of a request's `Authorization` header, held to what its route asks. The guard and
 * the routes answered before Nest's pipeline (the fast paths) both authenticate through this.
 */
export async function authenticate(verifier: TokenVerifier, header: string | undefined, required: Role | undefined, operatorOnly: boolean): Promise<AuthenticatedCaller> {
  if (!header) throw unauthenticated(MISSING_TOKEN_MESSAGE);
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  const caller = match?.[1] ? await verifier.verify(match[1]) : undefined;
  if (!caller) throw unauthenticated(INVALID_TOKEN_MESSAGE);
  if (required && !roleSatisfies(caller.role, required)) {
    throw new PaddockError('permission_denied', `this operation requires the ${required} role; the token has ${caller.role}`);
  }
  if (operatorOnly && !(caller.operator && caller.role === 'SANDBOX_ADMIN')) {
    throw new PaddockError('permission_denied', 'this operation requires a SANDBOX_ADMIN token of the operator organization');
  }
  return caller;
}
