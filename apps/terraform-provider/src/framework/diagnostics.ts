/**
 * Diagnostics as Terraform shows them: a summary, a detail and, when one attribute is at fault,
 * its path, which makes Terraform point at that attribute's line in the configuration.
 * A path step is an attribute name, a list index, or a map key.
 */
export type PathStep = string | number | { key: string };
export type AttributePath = readonly PathStep[];

export interface Diagnostic {
  severity: 'error' | 'warning';
  summary: string;
  detail: string;
  path?: AttributePath;
}

export const error = (summary: string, detail: string, path?: AttributePath): Diagnostic => ({ severity: 'error', summary, detail, ...(path ? { path } : {}) });

export const hasErrors = (diags: readonly Diagnostic[]): boolean => diags.some((d) => d.severity === 'error');

/** `spec.maintenance_policy.windows[0].cron`, `spec.overrides.env["KEY"]`: how a path reads in a message. */
export function showPath(path: AttributePath): string {
  let out = '';
  for (const step of path) {
    if (typeof step === 'number') out += `[${step}]`;
    else if (typeof step === 'string') out += out ? `.${step}` : step;
    else out += `[${JSON.stringify(step.key)}]`;
  }
  return out;
}
