export type { Caller, AuthenticatedCaller, Role } from './caller';
export { ROLES, roleSatisfies } from './caller';
export { CurrentCaller, RequireRole, RequireOperator, Public } from './auth.decorators';
export { AuthGuard, authenticate, INVALID_TOKEN_MESSAGE, MISSING_TOKEN_MESSAGE } from './auth.guard';
export { TokenVerifier } from './token-verifier';
export { IdentityModule } from './identity.module';
export { TokensService, type ApiTokenView, type IssuedToken, type OrganizationView } from './tokens.service';
export type { IdentityTables } from './identity.tables';
