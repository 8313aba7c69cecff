"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.PolicyHolder = void 0;
const policy_1 = require("@paddock/policy");
/**
 * Holds the runner's current policy. Running sandboxes never consult it again: their spec was
 * resolved once at launch and the result travels with them (and with their persisted labels).
 */
class PolicyHolder {
    constructor() {
        this.active = { policy: policy_1.DEFAULT_POLICY, etag: null, usingDefault: true };
    }
    current() {
        return this.active;
    }
    /** `undefined` policy = back to the platform default (e.g. the controller removed it). */
    set(policy, etag) {
        this.active = policy
            ? { policy, etag: etag ?? null, usingDefault: false }
            : { policy: policy_1.DEFAULT_POLICY, etag: null, usingDefault: true };
    }
    resolve(spec, capabilities) {
        const active = this.active;
        const r = (0, policy_1.resolveSandboxSpec)({ policy: active.policy, spec, capabilities });
        return r.ok ? { ok: true, resolved: r.resolved, policy: active } : { ok: false, violations: r.violations };
    }
}
exports.PolicyHolder = PolicyHolder;
//# sourceMappingURL=policy-holder.js.map