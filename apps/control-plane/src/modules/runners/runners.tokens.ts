/**
 * Secret that signs list page tokens (HMAC-SHA256): `AppConfig.pageTokenSecret` (env
 * `PADDOCK_PAGE_TOKEN_SECRET`, else a random per-process key: tokens then do not survive a restart
 * or cross replicas, which only restarts a listing).
 */
export const PAGE_TOKEN_SECRET = Symbol('PAGE_TOKEN_SECRET');
