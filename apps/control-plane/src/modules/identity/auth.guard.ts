import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { PaddockError } from '@paddock/contracts';
import type { FastifyRequest } from 'fastify';
import { OPERATOR_ONLY, PUBLIC_ROUTE, REQUIRED_ROLE, type RequestWithCaller } from './auth.decorators';
import { roleSatisfies, type Role } from './caller';
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
    const header = req.headers.authorization;
    if (!header) throw unauthenticated(MISSING_TOKEN_MESSAGE);
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    const caller = match?.[1] ? await this.verifier.verify(match[1]) : undefined;
    if (!caller) throw unauthenticated(INVALID_TOKEN_MESSAGE);
    req.paddockCaller = caller;

    const required = access.role;
    if (required && !roleSatisfies(caller.role, required)) {
      throw new PaddockError('permission_denied', `this operation requires the ${required} role; the token has ${caller.role}`);
    }
    if (access.operatorOnly && !(caller.operator && caller.role === 'SANDBOX_ADMIN')) {
      throw new PaddockError('permission_denied', 'this operation requires a SANDBOX_ADMIN token of the operator organization');
    }
    return true;
  }
}
