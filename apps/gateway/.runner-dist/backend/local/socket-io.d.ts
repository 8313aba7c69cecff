import { type Socket } from 'node:net';
/** Connects to a Unix socket; rejects with the errno error (ENOENT, ECONNREFUSED...) if nobody listens. */
export declare function connectUnix(path: string): Promise<Socket>;
export declare function sendLine(sock: Socket, obj: unknown): void;
/**
 * Reads one newline-terminated line without consuming anything after it: the rest is pushed back
 * (`unshift`) so the socket can then be handed to a consumer as a raw byte stream.
 */
export declare function readLine(sock: Socket): Promise<string>;
export interface SupervisorReply {
    ok?: boolean;
    errno?: string;
    message?: string;
    [k: string]: unknown;
}
export declare function readReply(sock: Socket): Promise<SupervisorReply>;
/** One request/one reply (stop, ping). */
export declare function request(path: string, body: Record<string, unknown>): Promise<SupervisorReply>;
