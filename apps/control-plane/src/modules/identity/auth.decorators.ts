import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import { PaddockError } from '@paddock/contracts';
import type { AuthenticatedCaller, Role } from './caller';

export const REQUIRED_ROLE = 'paddock:required-role';
export const PUBLIC_ROUTE = 'paddock:public';
export const OPERATOR_ONLY = 'paddock:operator-only';

/** The route needs a token holding this role (SANDBOX_ADMIN also satisfies SANDBOX_USER). */
export const RequireRole = (role: Role): MethodDecorator & ClassDecorator => SetMetadata(REQUIRED_ROLE, role);

/** The route needs no token (health, metrics, OpenAPI). Every other route needs a valid token. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);

/** The route needs an admin token of the operator organization (see README). */
export const RequireOperator = (): MethodDecorator & ClassDecorator => SetMetadata(OPERATOR_ONLY, true);

export interface RequestWithCaller {
  paddockCaller?: AuthenticatedCaller;
}

/** Injects the authenticated {@link Caller} (actually an {@link AuthenticatedCaller}). */
export const CurrentCaller = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthenticatedCaller => {
  const caller = ctx.switchToHttp().getRequest<RequestWithCaller>().paddockCaller;
  // Only reachable on a @Public route, which is a programming error.
  if (!caller) throw new PaddockError('internal', 'route reads the caller but is not authenticated');
  return caller;
});
