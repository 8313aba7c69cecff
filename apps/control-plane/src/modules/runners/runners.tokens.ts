/**
 * Secret that signs list page tokens (HMAC-SHA256). Provided by the app's config when set;
 * otherwise the module uses env `PADDOCK_PAGE_TOKEN_SECRET`, or a random per-process key (tokens
 * then do not survive a restart or cross replicas, which only restarts a listing).
 */
export const PAGE_TOKEN_SECRET = Symbol('PAGE_TOKEN_SECRET');
