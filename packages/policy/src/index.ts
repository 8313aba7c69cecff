/**
 * @paddock/policy: the one policy engine every plane uses. Pure: plain data in, plain data out,
 * no I/O, no clock. The YAML/JSON document parser lives in the `@paddock/policy/document` entry
 * (it needs the `yaml` package, which the core never imports); the golden-fixture loader (node:fs)
 * lives in `@paddock/policy/testing`.
 */
export {
  POLICY_MAX_ENCODED_BYTES,
  POLICY_TOO_LARGE_MESSAGE,
  MAX_LIFETIME_SECONDS,
  FALLBACK_LIFETIME_SECONDS,
} from '@paddock/contracts';
export { validatePolicy, BASE_REFUSED_FIELDS, type ValidatePolicyResult } from './validate-policy';
export { resolveSandboxSpec, type ResolveInput, type ResolveResult } from './resolve';
export {
  explainPlacement,
  violationsCommonToAll,
  type PlacementVerdict,
  type PlacementCandidate,
} from './explain';
export {
  checkProfileTemplate,
  findPrivilegedPodFields,
  PRIVILEGED_ANNOTATION_PREFIXES,
  type CheckProfileTemplateOptions,
  type CheckProfileTemplateResult,
} from './legacy-template';
export { parseCpuMillis, parseMemoryBytes, formatCpu, formatMemory, isQuantity } from './quantity';
export { parseCidr, type ParsedCidr } from './cidr';
export { checkSourceAccess, SOURCE_ALLOWLIST_FIELD } from './source-access';
export { hostPatternCovers, isValidHostnamePattern } from './network';
export { compilePolicy, type CompiledPolicy } from './compile';
export { DEFAULT_POLICY, PLATFORM_DEFAULTS, SPEC_LIMITS } from './defaults';
export { specFeatureUses, type SpecFeatureUse } from './spec-features';
export { POLICY_RULES, type PolicyRule } from './violations';
export { imageAllowedByRegistries, imageAllowedByList, qualifyImage } from './image';
export { warmPoolKey } from './warm-pool-key';
