import type { FieldViolation, RunnerSpecSchema } from '@paddock/contracts';
import type { z } from 'zod';

/**
 * Runner settings no runner applies yet, refused by name instead of being stored and shown as if
 * they took effect. Each has an equivalent in the runner's policy, which every runner enforces
 * (and which placement and `:explain` see): the refusal says which.
 */
export function unappliedSettingViolations(spec: z.infer<typeof RunnerSpecSchema>, prefix: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  if (spec.enforceResourceLimits === true) {
    const field = `${prefix}.enforce_resource_limits`;
    out.push({
      field,
      rule: 'not_applied',
      description: `${field}: runners do not apply this setting; set the runner policy's constraints.resources.requireLimits to true instead`,
      requested: true,
    });
  }
  for (const [key, wire, instead] of [
    ['cpuRuntimeClass', 'cpu_runtime_class', 'defaultCpuRuntimeClass'],
    ['gpuRuntimeClass', 'gpu_runtime_class', 'defaultGpuRuntimeClass'],
  ] as const) {
    const value = spec.overrides?.[key];
    if (value === undefined || value === '') continue;
    const field = `${prefix}.overrides.${wire}`;
    out.push({
      field,
      rule: 'not_applied',
      description: `${field}: runners do not apply this setting; set the runner policy's constraints.security.${instead} (and allowedRuntimeClasses) instead`,
      requested: value,
    });
  }
  return out;
}
