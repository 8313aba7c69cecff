import type { SandboxSpecInput } from '@paddock/contracts';

/** The create form's fields: the common case of one container. Anything else goes through the spec editor. */
export interface SandboxForm {
  image: string;
  command: string;
  cpu: string;
  memory: string;
  tags: string;
  runnerIds: string[];
  maxLifetimeSeconds: string;
}

export const EMPTY_FORM: SandboxForm = { image: '', command: '', cpu: '', memory: '', tags: '', runnerIds: [], maxLifetimeSeconds: '' };

/** A sandbox spec from the form: only what the user filled in, so policy defaults apply to the rest. */
export function specFromForm(f: SandboxForm): SandboxSpecInput {
  const container: Record<string, unknown> = { name: 'main' };
  if (f.image.trim()) container.image = f.image.trim();
  if (f.command.trim()) container.command = ['/bin/sh', '-c', f.command.trim()];
  const resources: Record<string, string> = {};
  if (f.cpu.trim()) resources.cpu = f.cpu.trim();
  if (f.memory.trim()) resources.memory = f.memory.trim();
  if (Object.keys(resources).length) container.resources = resources;
  const spec: Record<string, unknown> = { containers: [container] };
  const tags = f.tags.split(',').map((t) => t.trim()).filter(Boolean);
  if (tags.length) spec.tags = tags;
  // Naming runners means the organization's own runners (CKS mode), as cwic's --runner-id does.
  if (f.runnerIds.length) Object.assign(spec, { mode: 'SANDBOX_MODE_CKS', runnerIds: f.runnerIds });
  if (f.maxLifetimeSeconds.trim()) spec.maxLifetimeSeconds = Number(f.maxLifetimeSeconds.trim());
  return spec;
}
