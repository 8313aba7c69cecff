import { PaddockError } from '@paddock/contracts';
export declare function sandboxNotFound(sandboxId: string): PaddockError;
export declare function sandboxNotRunning(sandboxId: string, state: string): PaddockError;
/** Maps an errno reported by a file handler inside the sandbox to the API's error model. */
export declare function fileError(sandboxId: string, path: string, errno: string, message: string): PaddockError;
