export { run, buildProgram, VERSION } from './program';
export { planPatch, changedPaths, normalizeForCompare } from './patch';
export { configPath, effectiveSettings } from './config';
export type { Io } from './context';
