"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.WORKSPACE = exports.SANDBOX_PATH = void 0;
exports.resolveImage = resolveImage;
exports.imageMountArgs = imageMountArgs;
exports.baseEnv = baseEnv;
exports.mainCommand = mainCommand;
exports.bwrapArgs = bwrapArgs;
const node_fs_1 = require("node:fs");
const node_path_1 = require("node:path");
const options_1 = require("./options");
function resolveImage(name, images) {
    if (name === '' || name === 'default' || name === options_1.BASE_IMAGE)
        return { kind: 'host' };
    const img = images[name];
    return img ? { kind: 'rootfs', path: img.rootfs } : undefined;
}
const HOST_ROOT_LINKS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];
/** The /etc files programs need to resolve users, libraries, time zones, hosts and TLS roots. */
const HOST_ETC = [
    'passwd',
    'group',
    'nsswitch.conf',
    'hosts',
    'host.conf',
    'resolv.conf',
    'ld.so.cache',
    'ld.so.conf',
    'ld.so.conf.d',
    'localtime',
    'alternatives',
    'ssl',
    'ca-certificates',
    'mime.types',
];
/** Mount points the backend provides itself; a rootfs's own copies are ignored. */
const RESERVED = new Set(['proc', 'dev', 'sys', 'tmp', 'workspace', 'run']);
function entryArgs(hostPath, name) {
    const st = (0, node_fs_1.lstatSync)(hostPath);
    if (st.isSymbolicLink())
        return ['--symlink', (0, node_fs_1.readlinkSync)(hostPath), `/${name}`];
    return ['--ro-bind', hostPath, `/${name}`];
}
/** bwrap arguments that build the read-only root of an image on top of an empty tmpfs. */
function imageMountArgs(src) {
    const args = [];
    if (src.kind === 'host') {
        args.push('--ro-bind', '/usr', '/usr');
        for (const name of HOST_ROOT_LINKS) {
            if ((0, node_fs_1.existsSync)(`/${name}`))
                args.push(...entryArgs(`/${name}`, name));
        }
        args.push('--dir', '/etc');
        for (const f of HOST_ETC)
            args.push('--ro-bind-try', `/etc/${f}`, `/etc/${f}`);
        args.push('--dir', '/var', '--symlink', '../tmp', '/var/tmp');
        return args;
    }
    for (const name of (0, node_fs_1.readdirSync)(src.path)) {
        if (!RESERVED.has(name))
            args.push(...entryArgs((0, node_path_1.join)(src.path, name), name));
    }
    return args;
}
exports.SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
exports.WORKSPACE = '/workspace';
/** The environment every process of the sandbox starts with (main process and exec). */
function baseEnv(spec) {
    return { PATH: exports.SANDBOX_PATH, HOME: exports.WORKSPACE, HOSTNAME: spec.sandboxId, TERM: 'xterm', ...spec.env };
}
/** What the main process runs: the spec's argv, or an idle keep-alive so the sandbox stays up for exec. */
function mainCommand(spec) {
    return spec.command.length > 0 ? spec.command : ['sleep', 'infinity'];
}
/**
 * The full bwrap argv. fd 3 receives bwrap's info (the namespace init's pid), fd 4 carries the
 * seccomp program. Every namespace is new (network too unless `host`), the user namespace cannot
 * be nested further, no capability is kept, the root is read-only, and /workspace and /tmp are
 * the only writable places (both on the sandbox's size-capped tmpfs).
 */
function bwrapArgs(spec, image, diskDir) {
    const env = baseEnv(spec);
    return [
        'bwrap',
        '--unshare-all',
        ...(spec.network === 'host' ? ['--share-net'] : []),
        '--unshare-user',
        '--disable-userns',
        '--die-with-parent',
        '--new-session',
        '--cap-drop',
        'ALL',
        '--hostname',
        spec.sandboxId,
        '--tmpfs',
        '/',
        ...imageMountArgs(image),
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--bind',
        (0, node_path_1.join)(diskDir, 'workspace'),
        exports.WORKSPACE,
        '--bind',
        (0, node_path_1.join)(diskDir, 'tmp'),
        '/tmp',
        '--remount-ro',
        '/',
        '--chdir',
        spec.workingDir || exports.WORKSPACE,
        '--clearenv',
        ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
        '--info-fd',
        '3',
        '--seccomp',
        '4',
        '--',
        ...mainCommand(spec),
    ];
}
//# sourceMappingURL=bwrap-args.js.map