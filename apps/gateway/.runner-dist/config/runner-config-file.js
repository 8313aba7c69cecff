"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.ConfigFileWatcher = exports.RunnerConfigFileSchema = void 0;
exports.loadRunnerConfigFile = loadRunnerConfigFile;
const promises_1 = require("node:fs/promises");
const node_fs_1 = require("node:fs");
const node_path_1 = require("node:path");
const contracts_1 = require("@paddock/contracts");
const yaml_1 = require("yaml");
const zod_1 = require("zod");
/**
 * The runner's config file: in Kubernetes a mounted ConfigMap written by the controller, locally a
 * file written by the controller's local driver. Every field is optional so a runner can start
 * before the controller has written anything (it then applies the platform default policy).
 */
exports.RunnerConfigFileSchema = zod_1.z.object({
    runnerId: zod_1.z.string().min(1).optional(),
    /** Runner release revision the controller rolled out. */
    revision: zod_1.z.number().int().nonnegative().default(0),
    /** The policy document; absent = the platform default policy. */
    policy: contracts_1.PolicySchema.optional(),
    policyEtag: zod_1.z.string().min(1).optional(),
    identity: zod_1.z
        .object({
        organizationId: zod_1.z.string().min(1).optional(),
        clusterId: zod_1.z.string().min(1).optional(),
        zone: zod_1.z.string().min(1).optional(),
        runnerGroupId: zod_1.z.string().min(1).optional(),
    })
        .default({}),
});
/**
 * Reads and validates the config file. YAML 1.1 rules, as for Kubernetes ConfigMaps; JSON is a
 * subset. Throws an Error naming the file and every invalid field.
 */
async function loadRunnerConfigFile(path) {
    const text = await (0, promises_1.readFile)(path, 'utf8');
    const raw = text.trim() === '' ? {} : (0, yaml_1.parse)(text, { version: '1.1' });
    const parsed = exports.RunnerConfigFileSchema.safeParse(raw ?? {});
    if (!parsed.success) {
        const list = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
        throw new Error(`runner config file ${path} is invalid: ${list}`);
    }
    return { file: parsed.data, fingerprint: text };
}
/**
 * Watches the config file and calls `onChange` with each new valid content.
 *
 * Writers replace the file by rename (ConfigMap symlink swaps, `write tmp + rename`), which
 * detaches an inode watch; so the DIRECTORY is watched and the file re-read by name, plus a
 * periodic stat as a fallback for filesystems where fs.watch misses events (overlay, NFS).
 * An invalid file is reported through `onError` and the last good config stays in force.
 */
class ConfigFileWatcher {
    constructor(path, onChange, onError, pollMs = 1_000) {
        this.path = path;
        this.onChange = onChange;
        this.onError = onError;
        this.pollMs = pollMs;
        this.lastStat = '';
        this.reading = Promise.resolve();
    }
    /** Reads the file once (if present) and starts watching. */
    async start() {
        let first;
        try {
            first = await loadRunnerConfigFile(this.path);
            this.lastFingerprint = first.fingerprint;
            this.lastStat = await this.statKey();
        }
        catch (e) {
            if (!isMissing(e))
                this.onError(e);
        }
        try {
            this.watcher = (0, node_fs_1.watch)((0, node_path_1.dirname)(this.path), (_event, name) => {
                if (name === null || name === (0, node_path_1.basename)(this.path) || name.startsWith('..'))
                    this.check();
            });
            this.watcher.on('error', () => undefined);
        }
        catch {
            // The directory may not exist yet; the periodic stat below still picks the file up.
        }
        this.timer = setInterval(() => {
            void this.statKey().then((k) => {
                if (k !== this.lastStat)
                    this.check();
            });
        }, this.pollMs);
        this.timer.unref();
        return first;
    }
    /** Re-reads the file now (serialized, so two events never race to apply an older content last). */
    check() {
        this.reading = this.reading.then(async () => {
            try {
                this.lastStat = await this.statKey();
                const cfg = await loadRunnerConfigFile(this.path);
                if (cfg.fingerprint === this.lastFingerprint)
                    return;
                this.lastFingerprint = cfg.fingerprint;
                this.onChange(cfg);
            }
            catch (e) {
                if (!isMissing(e))
                    this.onError(e);
            }
        });
    }
    /** Resolves once every read queued so far has been applied. */
    async settled() {
        await this.reading;
    }
    stop() {
        this.watcher?.close();
        if (this.timer)
            clearInterval(this.timer);
    }
    async statKey() {
        try {
            const s = await (0, promises_1.stat)(this.path);
            return `${s.ino}:${s.size}:${s.mtimeMs}`;
        }
        catch {
            return 'missing';
        }
    }
}
exports.ConfigFileWatcher = ConfigFileWatcher;
function isMissing(e) {
    return typeof e === 'object' && e !== null && e.code === 'ENOENT';
}
//# sourceMappingURL=runner-config-file.js.map