import { PaddockError, type FieldViolation } from '@paddock/contracts';
import type { z } from 'zod';
/** Every error the runner replies with; each names the object and what to do. */
export declare const runnerErrors: {
    sandboxNotFound: (sandboxId: string) => PaddockError;
    notRunning: (sandboxId: string, state: string) => PaddockError;
    terminated: (sandboxId: string, state: string) => PaddockError;
    alreadyExists: (sandboxId: string) => PaddockError;
    policyViolation: (violations: FieldViolation[]) => PaddockError;
    atCapacity: (detail: string) => PaddockError;
    fileNotFound: (path: string) => PaddockError;
    fileTooLarge: (path: string, size: number, limit: number) => PaddockError;
};
/** A request body that failed its schema: every issue becomes a field violation. */
export declare function invalidRequest(error: z.ZodError): PaddockError;
/**
 * Maps whatever a backend threw to the wire error model. Backends may throw PaddockError
 * themselves; file-system errno codes map to the data-plane reasons of SPEC §4.15.
 */
export declare function toPaddockError(e: unknown, context?: {
    path?: string;
}): PaddockError;
