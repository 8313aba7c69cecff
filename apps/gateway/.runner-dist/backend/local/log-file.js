"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.LogCursor = exports.HEADER_BYTES = void 0;
exports.fromOffset = fromOffset;
exports.tailLines = tailLines;
const node_fs_1 = require("node:fs");
/**
 * Reader for the supervisor's framed log: records of a 16-byte header `<u32 length, u8 stream,
 * 3 pad, f64 unix seconds>` then the payload. Logical offsets count payload bytes only, so
 * `fromOffset = chunk.offset + chunk.data.length` resumes exactly, with no gap and no duplicate.
 */
exports.HEADER_BYTES = 16;
class LogCursor {
    constructor(path) {
        this.path = path;
        /** Position in the file of the next unread record. */
        this.filePos = 0;
        /** Logical offset of the next unread payload byte. */
        this.offset = 0;
    }
    /** Reads every complete record appended since the last call (a partial tail record waits for the next call). */
    readNew() {
        let size;
        try {
            size = (0, node_fs_1.statSync)(this.path).size;
        }
        catch {
            return [];
        }
        if (size <= this.filePos)
            return [];
        const fd = (0, node_fs_1.openSync)(this.path, 'r');
        try {
            const buf = Buffer.allocUnsafe(size - this.filePos);
            let got = 0;
            while (got < buf.length) {
                const n = (0, node_fs_1.readSync)(fd, buf, got, buf.length - got, this.filePos + got);
                if (n === 0)
                    break;
                got += n;
            }
            const out = [];
            let pos = 0;
            while (pos + exports.HEADER_BYTES <= got) {
                const len = buf.readUInt32LE(pos);
                if (pos + exports.HEADER_BYTES + len > got)
                    break;
                const stream = buf.readUInt8(pos + 4) === 1 ? 'stderr' : 'stdout';
                const time = new Date(buf.readDoubleLE(pos + 8) * 1000);
                const data = Buffer.from(buf.subarray(pos + exports.HEADER_BYTES, pos + exports.HEADER_BYTES + len));
                out.push({ offset: this.offset, stream, data, time });
                this.offset += len;
                pos += exports.HEADER_BYTES + len;
            }
            this.filePos += pos;
            return out;
        }
        finally {
            (0, node_fs_1.closeSync)(fd);
        }
    }
}
exports.LogCursor = LogCursor;
/** Drops what precedes `fromOffset`, slicing the record it falls in. */
function fromOffset(chunks, from) {
    const out = [];
    for (const c of chunks) {
        const end = c.offset + c.data.length;
        if (end <= from)
            continue;
        if (c.offset >= from)
            out.push(c);
        else
            out.push({ ...c, offset: from, data: c.data.subarray(from - c.offset) });
    }
    return out;
}
/** Keeps the last `n` lines (a final line without a newline counts as a line). */
function tailLines(chunks, n) {
    if (n <= 0)
        return [];
    let newlines = 0;
    for (let i = chunks.length - 1; i >= 0; i--) {
        const c = chunks[i];
        for (let j = c.data.length - 1; j >= 0; j--) {
            const isLastByte = i === chunks.length - 1 && j === c.data.length - 1;
            if (c.data[j] === 10 && !isLastByte) {
                newlines++;
                if (newlines === n) {
                    const sliced = { ...c, offset: c.offset + j + 1, data: c.data.subarray(j + 1) };
                    return [...(sliced.data.length > 0 ? [sliced] : []), ...chunks.slice(i + 1)];
                }
            }
        }
    }
    return chunks;
}
//# sourceMappingURL=log-file.js.map