"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.HeartbeatPublisher = void 0;
const contracts_1 = require("@paddock/contracts");
/**
 * Publishes the runner's heartbeat every `intervalMs`, and once at start so observers learn
 * about a (re)started runner without waiting a full period.
 */
class HeartbeatPublisher {
    constructor(nc, runnerId, intervalMs, build) {
        this.nc = nc;
        this.runnerId = runnerId;
        this.intervalMs = intervalMs;
        this.build = build;
        this.sequence = 0;
    }
    start() {
        this.beat();
        this.timer = setInterval(() => this.beat(), this.intervalMs);
    }
    stop() {
        if (this.timer)
            clearInterval(this.timer);
        this.timer = undefined;
    }
    /** Publishes one heartbeat now (also used after a policy change, so the new etag shows at once). */
    beat() {
        if (this.nc.isClosed())
            return;
        const hb = this.build(this.sequence++, new Date());
        this.nc.publish(contracts_1.subjects.runnerHeartbeat(this.runnerId), JSON.stringify(hb));
    }
}
exports.HeartbeatPublisher = HeartbeatPublisher;
//# sourceMappingURL=heartbeat.js.map