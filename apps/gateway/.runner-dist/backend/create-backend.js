"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.createBackend = createBackend;
const node_path_1 = require("node:path");
const local_1 = require("./local");
/** Picks the backend named by `PADDOCK_RUNNER_BACKEND`. */
function createBackend(env, runnerId) {
    switch (env.PADDOCK_RUNNER_BACKEND) {
        case 'local':
            return new local_1.LocalBackend({ runnerId, stateDir: (0, node_path_1.join)(env.PADDOCK_RUNNER_STATE_DIR, runnerId) });
        case 'kubernetes':
            throw new Error('PADDOCK_RUNNER_BACKEND=kubernetes is not available in this build yet; use local');
    }
}
//# sourceMappingURL=create-backend.js.map