"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RunnerConfigFileSchema = exports.RunnerEnvSchema = exports.parseRunnerEnv = exports.RUNNER_OPTIONS = exports.RunnerLifecycle = exports.RunnerModule = exports.startRunner = void 0;
var runner_1 = require("./runner");
Object.defineProperty(exports, "startRunner", { enumerable: true, get: function () { return runner_1.startRunner; } });
var app_module_1 = require("./app.module");
Object.defineProperty(exports, "RunnerModule", { enumerable: true, get: function () { return app_module_1.RunnerModule; } });
Object.defineProperty(exports, "RunnerLifecycle", { enumerable: true, get: function () { return app_module_1.RunnerLifecycle; } });
Object.defineProperty(exports, "RUNNER_OPTIONS", { enumerable: true, get: function () { return app_module_1.RUNNER_OPTIONS; } });
var env_1 = require("./config/env");
Object.defineProperty(exports, "parseRunnerEnv", { enumerable: true, get: function () { return env_1.parseRunnerEnv; } });
Object.defineProperty(exports, "RunnerEnvSchema", { enumerable: true, get: function () { return env_1.RunnerEnvSchema; } });
var runner_config_file_1 = require("./config/runner-config-file");
Object.defineProperty(exports, "RunnerConfigFileSchema", { enumerable: true, get: function () { return runner_config_file_1.RunnerConfigFileSchema; } });
//# sourceMappingURL=index.js.map