import { PaddockError } from '@paddock/contracts';
import type { ExecProcess, ExecRequest, ExecResult, ExecStreamRequest } from '../sandbox-backend';
/**
 * Client side of the supervisor's exec protocol. Three connections per command: `ctl` (request,
 * start confirmation, kill/resize, exit status), `io` (the command's stdin and stdout: the socket
 * itself is its fd 0 and 1) and `err` (its fd 2). Data never passes through another process, so
 * backpressure is the kernel's: a consumer that stops reading stops the command.
 */
export declare function startExec(socketPath: string, req: ExecStreamRequest & {
    env: Record<string, string>;
}, onNotRunning: () => PaddockError): Promise<ExecProcess>;
export declare const DEFAULT_MAX_OUTPUT_BYTES: number;
/** Unary exec on top of the streaming one: stdin written whole, outputs captured with caps, timeout kills the tree. */
export declare function runExec(proc: ExecProcess, req: ExecRequest): Promise<ExecResult>;
