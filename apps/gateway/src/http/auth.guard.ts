import { Inject, Injectable, createParamDecorator, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal, TokenAuthenticator } from '../auth/token-authenticator';
import { AUTH } from './tokens';

type AuthedRequest = FastifyRequest & { principal?: Principal };

/** Every data-plane route needs a valid token; the principal rides on the request. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(@Inject(AUTH) private readonly auth: TokenAuthenticator) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    req.principal = await this.auth.authenticateRequest(req);
    return true;
  }
}

export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const p = ctx.switchToHttp().getRequest<AuthedRequest>().principal;
  if (!p) throw new Error('AuthGuard did not run for this route');
  return p;
});
