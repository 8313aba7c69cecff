"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.sandboxNotFound = sandboxNotFound;
exports.sandboxNotRunning = sandboxNotRunning;
exports.fileError = fileError;
const contracts_1 = require("@paddock/contracts");
function sandboxNotFound(sandboxId) {
    return new contracts_1.PaddockError('not_found', `sandbox ${sandboxId} not found on this runner`, {
        reason: 'CWSANDBOX_SANDBOX_NOT_FOUND',
        metadata: { sandboxId },
    });
}
function sandboxNotRunning(sandboxId, state) {
    return new contracts_1.PaddockError('failed_precondition', `sandbox ${sandboxId} is not running (state ${state})`, {
        reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING',
        metadata: { sandboxId, state },
    });
}
/** Maps an errno reported by a file handler inside the sandbox to the API's error model. */
function fileError(sandboxId, path, errno, message) {
    const metadata = { sandboxId, path, errno };
    switch (errno) {
        case 'ENOENT':
            return new contracts_1.PaddockError('not_found', `path: ${path} not found in sandbox ${sandboxId}`, {
                reason: 'CWSANDBOX_FILE_NOT_FOUND',
                metadata,
            });
        case 'ENOTRUNNING':
            return new contracts_1.PaddockError('failed_precondition', `sandbox ${sandboxId} is not running`, {
                reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING',
                metadata,
            });
        case 'EACCES':
        case 'EPERM':
        case 'EROFS':
            return new contracts_1.PaddockError('permission_denied', `path: ${path} is not writable or readable in the sandbox (${message})`, {
                metadata,
            });
        case 'ENOSPC':
        case 'EDQUOT':
        case 'EFBIG':
            return new contracts_1.PaddockError('resource_exhausted', `path: ${path}: the sandbox's disk limit is reached (${message})`, {
                reason: 'CWSANDBOX_FILE_TOO_LARGE',
                metadata,
            });
        case 'EISDIR':
        case 'ENOTDIR':
        case 'ENOTEMPTY':
        case 'EEXIST':
        case 'EINVAL':
        case 'ELOOP':
        case 'ENAMETOOLONG':
            return new contracts_1.PaddockError('invalid_argument', `path: ${path}: ${message}`, {
                reason: 'CWSANDBOX_INVALID_REQUEST',
                violations: [{ field: 'path', rule: errno.toLowerCase(), description: message }],
                metadata,
            });
        default:
            return new contracts_1.PaddockError('internal', `path: ${path}: ${message} (${errno})`, { reason: 'CWSANDBOX_INTERNAL', metadata });
    }
}
//# sourceMappingURL=errors.js.map