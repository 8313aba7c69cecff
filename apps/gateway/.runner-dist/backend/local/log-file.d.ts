import type { LogChunk } from '../sandbox-backend';
/**
 * Reader for the supervisor's framed log: records of a 16-byte header `<u32 length, u8 stream,
 * 3 pad, f64 unix seconds>` then the payload. Logical offsets count payload bytes only, so
 * `fromOffset = chunk.offset + chunk.data.length` resumes exactly, with no gap and no duplicate.
 */
export declare const HEADER_BYTES = 16;
export declare class LogCursor {
    private readonly path;
    /** Position in the file of the next unread record. */
    filePos: number;
    /** Logical offset of the next unread payload byte. */
    offset: number;
    constructor(path: string);
    /** Reads every complete record appended since the last call (a partial tail record waits for the next call). */
    readNew(): LogChunk[];
}
/** Drops what precedes `fromOffset`, slicing the record it falls in. */
export declare function fromOffset(chunks: LogChunk[], from: number): LogChunk[];
/** Keeps the last `n` lines (a final line without a newline counts as a line). */
export declare function tailLines(chunks: LogChunk[], n: number): LogChunk[];
