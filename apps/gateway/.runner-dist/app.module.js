"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
var RunnerModule_1;
Object.defineProperty(exports, "__esModule", { value: true });
exports.RunnerModule = exports.RunnerLifecycle = exports.RUNNER_OPTIONS = void 0;
const common_1 = require("@nestjs/common");
const runner_1 = require("./runner");
exports.RUNNER_OPTIONS = Symbol('RUNNER_OPTIONS');
/**
 * Nest is only the shell here: DI of the parsed options and the lifecycle hooks. Tokens are
 * injected explicitly (no reliance on emitted decorator metadata), so the module also runs
 * under tsx in development.
 */
let RunnerLifecycle = class RunnerLifecycle {
    constructor(options) {
        this.options = options;
    }
    async onApplicationBootstrap() {
        this.runner = await (0, runner_1.startRunner)(this.options);
    }
    /** Stops taking work and drains NATS; sandboxes keep running for the next runner process to adopt. */
    async onApplicationShutdown() {
        await this.runner?.stop();
    }
    get running() {
        return this.runner;
    }
};
exports.RunnerLifecycle = RunnerLifecycle;
exports.RunnerLifecycle = RunnerLifecycle = __decorate([
    (0, common_1.Injectable)(),
    __param(0, (0, common_1.Inject)(exports.RUNNER_OPTIONS)),
    __metadata("design:paramtypes", [Object])
], RunnerLifecycle);
let RunnerModule = RunnerModule_1 = class RunnerModule {
    static forRoot(options) {
        return {
            module: RunnerModule_1,
            providers: [{ provide: exports.RUNNER_OPTIONS, useValue: options }, RunnerLifecycle],
            exports: [RunnerLifecycle],
        };
    }
};
exports.RunnerModule = RunnerModule;
exports.RunnerModule = RunnerModule = RunnerModule_1 = __decorate([
    (0, common_1.Module)({})
], RunnerModule);
//# sourceMappingURL=app.module.js.map