"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.checkLocalBackendPrerequisites = exports.LocalBackend = void 0;
/**
 * Local sandbox backend: bubblewrap + cgroups on this machine. It isolates with Linux namespaces
 * and cgroups on a shared kernel, for development and single-machine use; production isolation
 * comes from the Kubernetes backend's runtime classes. See README.md.
 */
var local_backend_1 = require("./local-backend");
Object.defineProperty(exports, "LocalBackend", { enumerable: true, get: function () { return local_backend_1.LocalBackend; } });
var prerequisites_1 = require("./prerequisites");
Object.defineProperty(exports, "checkLocalBackendPrerequisites", { enumerable: true, get: function () { return prerequisites_1.checkLocalBackendPrerequisites; } });
//# sourceMappingURL=index.js.map