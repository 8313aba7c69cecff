import type { Readable } from 'node:stream';
import type { FileStat } from '../sandbox-backend';
/**
 * Client side of the supervisor's file protocol. Each operation runs in a handler that entered the
 * sandbox's mount namespace as the sandbox user, so paths resolve inside the sandbox root
 * (symlinks cannot escape it) and permissions are the sandbox's own.
 */
export declare class FileClient {
    private readonly socketPath;
    private readonly sandboxId;
    constructor(socketPath: string, sandboxId: string);
    private fail;
    read(path: string): Promise<Readable>;
    write(path: string, content: Readable | Buffer, mode?: number): Promise<number>;
    private simple;
    list(path: string): Promise<FileStat[]>;
    stat(path: string): Promise<FileStat>;
    remove(path: string, recursive: boolean): Promise<void>;
}
