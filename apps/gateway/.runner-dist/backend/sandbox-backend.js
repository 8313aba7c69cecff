"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
//# sourceMappingURL=sandbox-backend.js.map