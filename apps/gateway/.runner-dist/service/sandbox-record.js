"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.nextSequence = nextSequence;
exports.applyStateChange = applyStateChange;
exports.holdsCapacity = holdsCapacity;
exports.toSandbox = toSandbox;
exports.canonicalJson = canonicalJson;
const contracts_1 = require("@paddock/contracts");
const RANK = {
    STATE_UNSPECIFIED: -1,
    STATE_PENDING: 0,
    STATE_CREATING: 1,
    STATE_RUNNING: 2,
    STATE_TERMINATING: 3,
    STATE_COMPLETED: 4,
    STATE_FAILED: 4,
};
/** Next event sequence: microseconds of the clock, or one past the previous if the clock lags. */
function nextSequence(previous, now) {
    return Math.max(previous + 1, now.getTime() * 1000);
}
/** The reason a terminal state gets when the backend did not say. */
function defaultReason(from, to) {
    if (to === 'STATE_COMPLETED')
        return 'EXITED';
    return from === 'STATE_PENDING' || from === 'STATE_CREATING' ? 'FAILED_TO_START' : 'EXITED';
}
/**
 * Applies a state change. Returns the new record, or `undefined` when the change is stale (not
 * forward) and must be ignored. Staying in TERMINATING or another non-terminal state is a no-op.
 */
function applyStateChange(rec, change) {
    if ((0, contracts_1.isTerminalSandboxState)(rec.state))
        return undefined;
    if (RANK[change.state] <= RANK[rec.state])
        return undefined;
    const next = { ...rec, state: change.state, sequence: nextSequence(rec.sequence, change.at) };
    if (change.reason !== undefined)
        next.stateReason = change.reason;
    if (change.message !== undefined)
        next.message = change.message;
    if (change.exitCode !== undefined)
        next.exitCode = change.exitCode;
    if (change.state === 'STATE_RUNNING')
        next.startTime = change.at;
    if ((0, contracts_1.isTerminalSandboxState)(change.state)) {
        next.endTime = change.at;
        // A stop requested by the user or by the lifetime keeps that reason even if the backend only
        // reports the exit (or the kill) that followed.
        const requested = rec.state === 'STATE_TERMINATING' ? rec.stateReason : undefined;
        next.stateReason = requested ?? change.reason ?? defaultReason(rec.state, change.state);
    }
    return next;
}
/** Whether a record still holds capacity on the runner. */
function holdsCapacity(rec) {
    return !(0, contracts_1.isTerminalSandboxState)(rec.state);
}
/** The resource as the gateway and SDK show it. */
function toSandbox(rec, runner) {
    return {
        sandboxId: rec.sandboxId,
        organizationId: rec.organizationId,
        spec: rec.spec,
        labels: rec.labels,
        status: {
            ...rec.effective,
            state: rec.state,
            ...(rec.stateReason !== undefined ? { stateReason: rec.stateReason } : {}),
            ...(rec.message !== undefined ? { message: rec.message } : {}),
            ...(rec.exitCode !== undefined ? { exitCode: rec.exitCode } : {}),
            runnerId: runner.runnerId,
            runnerGroupId: runner.runnerGroupId,
            createTime: rec.createTime.toISOString(),
            ...(rec.startTime ? { startTime: rec.startTime.toISOString() } : {}),
            ...(rec.endTime ? { endTime: rec.endTime.toISOString() } : {}),
        },
    };
}
/** Deterministic JSON (sorted keys) so two equal requests fingerprint the same. */
function canonicalJson(value) {
    return JSON.stringify(value, (_k, v) => {
        if (v && typeof v === 'object' && !Array.isArray(v)) {
            return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
        }
        return v;
    });
}
//# sourceMappingURL=sandbox-record.js.map