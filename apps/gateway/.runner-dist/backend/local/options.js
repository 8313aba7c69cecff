"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.DEFAULT_LOG_CAP_BYTES = exports.BASE_IMAGE = void 0;
exports.isSafeId = isSafeId;
exports.resolveOptions = resolveOptions;
const node_path_1 = require("node:path");
exports.BASE_IMAGE = 'paddock/base';
exports.DEFAULT_LOG_CAP_BYTES = 10 * 1024 * 1024;
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Ids become directory and cgroup names, so they are restricted to a safe alphabet. */
function isSafeId(id) {
    return ID_PATTERN.test(id) && id !== '_supervisors';
}
function resolveOptions(o) {
    return {
        runnerId: o.runnerId,
        stateDir: o.stateDir ?? (0, node_path_1.join)('/run/paddock', o.runnerId),
        cgroupRoot: o.cgroupRoot ?? '/sys/fs/cgroup',
        images: o.images ?? {},
        bwrapPath: o.bwrapPath ?? '/usr/bin/bwrap',
        pythonPath: o.pythonPath ?? '/usr/bin/python3',
        sandboxUid: o.sandboxUid ?? 65534,
        sandboxGid: o.sandboxGid ?? 65534,
        logCapBytes: o.logCapBytes ?? exports.DEFAULT_LOG_CAP_BYTES,
        poolSize: o.poolSize ?? 2,
        lifetimeGraceMs: o.lifetimeGraceMs ?? 2000,
    };
}
//# sourceMappingURL=options.js.map