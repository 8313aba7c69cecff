"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.checkLocalBackendPrerequisites = checkLocalBackendPrerequisites;
const node_child_process_1 = require("node:child_process");
const node_fs_1 = require("node:fs");
const cgroups_1 = require("./cgroups");
const options_1 = require("./options");
/**
 * Checks what the local backend needs on this machine, so `pnpm start` can say clearly what is
 * missing instead of failing at the first launch.
 */
function checkLocalBackendPrerequisites(options = {}) {
    const o = (0, options_1.resolveOptions)({ runnerId: 'check', ...options });
    const problems = [];
    if (process.platform !== 'linux')
        problems.push(`the local backend needs Linux (this is ${process.platform})`);
    if (typeof process.getuid === 'function' && process.getuid() !== 0) {
        problems.push('the local backend must run as root (it creates cgroups and mounts each sandbox’s size-capped tmpfs)');
    }
    try {
        (0, node_fs_1.accessSync)(o.bwrapPath, node_fs_1.constants.X_OK);
    }
    catch {
        problems.push(`bubblewrap not found at ${o.bwrapPath} (install it: apt-get install bubblewrap)`);
    }
    try {
        (0, node_fs_1.accessSync)(o.pythonPath, node_fs_1.constants.X_OK);
    }
    catch {
        problems.push(`python3 not found at ${o.pythonPath} (the per-sandbox supervisor is a Python 3 script)`);
    }
    if (!(0, cgroups_1.detectCgroupMode)(o.cgroupRoot)) {
        problems.push(`no usable cgroups under ${o.cgroupRoot}: need cgroup v2 (cgroup.controllers) or v1 with cpu, memory and pids mounted`);
    }
    try {
        const max = Number((0, node_fs_1.readFileSync)('/proc/sys/user/max_user_namespaces', 'utf8').trim());
        if (max === 0)
            problems.push('user namespaces are disabled (user.max_user_namespaces = 0)');
    }
    catch {
        problems.push('cannot read /proc/sys/user/max_user_namespaces: user namespaces may be unavailable');
    }
    if (problems.length === 0) {
        const probe = (0, node_child_process_1.spawnSync)(o.bwrapPath, ['--unshare-all', '--unshare-user', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'], {
            timeout: 5000,
            uid: o.sandboxUid,
            gid: o.sandboxGid,
        });
        if (probe.status !== 0) {
            problems.push(`bubblewrap cannot create an unprivileged sandbox as uid ${o.sandboxUid}: ${probe.stderr?.toString().trim() || `exit ${probe.status}`}`);
        }
    }
    return { ok: problems.length === 0, problems };
}
//# sourceMappingURL=prerequisites.js.map