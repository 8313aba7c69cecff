"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.PersistedSandboxMetaSchema = exports.RUNNER_ID_LABEL = exports.SANDBOX_META_LABEL = void 0;
exports.primaryContainerOf = primaryContainerOf;
exports.effectiveFieldsOf = effectiveFieldsOf;
exports.allocationOf = allocationOf;
exports.toLaunchSpec = toLaunchSpec;
const contracts_1 = require("@paddock/contracts");
const zod_1 = require("zod");
/** The label under which a sandbox's metadata survives a runner restart (the backend persists labels). */
exports.SANDBOX_META_LABEL = 'paddock.dev/sandbox';
exports.RUNNER_ID_LABEL = 'paddock.dev/runner-id';
/**
 * What a restarted runner needs to serve an adopted sandbox again exactly as before: the request
 * as accepted and what the policy resolved at its launch (never re-resolved against a newer policy).
 */
exports.PersistedSandboxMetaSchema = zod_1.z.object({
    v: zod_1.z.literal(1),
    organizationId: zod_1.z.string().min(1),
    spec: contracts_1.SandboxSpecSchema,
    labels: zod_1.z.record(zod_1.z.string(), zod_1.z.string()),
    effective: contracts_1.SandboxEffectiveFieldsSchema,
    requestFingerprint: zod_1.z.string(),
    createTime: zod_1.z.string(),
    cpuMillis: zod_1.z.number().int().nonnegative(),
    memoryBytes: zod_1.z.number().int().nonnegative(),
});
function primaryContainerOf(resolved) {
    const primary = resolved.containers.find((c) => c.name === resolved.primaryContainer) ?? resolved.containers[0];
    if (!primary)
        throw new Error('resolved spec has no container');
    return primary;
}
/** The status echoes of a resolved spec (SPEC §4.3 `effective*`). */
function effectiveFieldsOf(resolved) {
    return {
        effectiveResources: resolved.effectiveResources,
        effectiveResourceRequirements: resolved.effectiveResourceRequirements,
        effectiveMaxLifetimeSeconds: resolved.effectiveMaxLifetimeSeconds,
        effectiveEgress: resolved.effectiveEgress,
        effectiveIngress: resolved.effectiveIngress,
        effectiveRuntimeClass: resolved.effectiveRuntimeClass,
    };
}
/** CPU and memory the sandbox is capped at: the primary container's limits (requests when unset). */
function allocationOf(resolved) {
    const { limits, requests } = primaryContainerOf(resolved).resources;
    return {
        cpuMillis: limits.cpuMillis > 0 ? limits.cpuMillis : requests.cpuMillis,
        memoryBytes: limits.memoryBytes > 0 ? limits.memoryBytes : requests.memoryBytes,
    };
}
/**
 * Maps a resolved, admitted spec to what a backend launches. Pure.
 *
 * Network: the local backend can only share the host network or have none, so anything short of
 * unrestricted egress runs with no network (the policy engine has already refused rule kinds the
 * runner's capabilities cannot enforce; this is the safe fallback, never a widening).
 */
function toLaunchSpec(input) {
    const { resolved } = input;
    const primary = primaryContainerOf(resolved);
    const { cpuMillis, memoryBytes } = allocationOf(resolved);
    return {
        sandboxId: input.sandboxId,
        organizationId: input.organizationId,
        runnerId: input.runnerId,
        image: primary.image,
        command: [...primary.command, ...primary.args],
        env: primary.env,
        ...(primary.workingDir ? { workingDir: primary.workingDir } : {}),
        cpuMillis,
        memoryBytes,
        pidsMax: input.caps.pidsMax,
        diskBytes: input.caps.diskBytes,
        openFilesMax: input.caps.openFilesMax,
        lifetimeSeconds: resolved.lifetimeSeconds,
        network: resolved.egress.unrestricted && !resolved.egress.denyAll ? 'host' : 'none',
        files: primary.files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64') })),
        labels: {
            [exports.RUNNER_ID_LABEL]: input.runnerId,
            [exports.SANDBOX_META_LABEL]: JSON.stringify(input.meta),
        },
    };
}
//# sourceMappingURL=launch-spec.js.map