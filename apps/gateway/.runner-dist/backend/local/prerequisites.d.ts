import { type LocalBackendOptions } from './options';
/**
 * Checks what the local backend needs on this machine, so `pnpm start` can say clearly what is
 * missing instead of failing at the first launch.
 */
export declare function checkLocalBackendPrerequisites(options?: Partial<LocalBackendOptions>): {
    ok: boolean;
    problems: string[];
};
