import { DEFAULT_CONTAINER_NAME } from '@paddock/contracts';
import type { Principal } from '../auth/token-authenticator';
import { invalid } from '../sandboxes/request-parsing';
import type { SandboxLifecycleService } from '../sandboxes/sandbox-lifecycle.service';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The primary container's name in a stored spec: named, marked, or the first (default `main`). */
export function primaryContainerOf(spec: unknown): string {
  if (!isObject(spec)) return DEFAULT_CONTAINER_NAME;
  if (typeof spec.primaryContainer === 'string' && spec.primaryContainer) return spec.primaryContainer;
  const containers = Array.isArray(spec.containers) ? spec.containers.filter(isObject) : [];
  const chosen = containers.find((c) => c.primary === true) ?? containers[0];
  return typeof chosen?.name === 'string' && chosen.name ? chosen.name : DEFAULT_CONTAINER_NAME;
}

/**
 * The `container` of a file call: files reach the primary container only (exec and logs take any
 * container of the sandbox, checked by its runner), so naming it is accepted and naming another
 * is refused, by name. Empty (the SDKs' default) means the primary and costs no lookup.
 */
export async function requirePrimaryContainer(lifecycle: SandboxLifecycleService, principal: Principal, sandboxId: string, container: string): Promise<void> {
  if (!container) return;
  const primary = primaryContainerOf((await lifecycle.get(principal, sandboxId)).spec);
  if (container !== primary) {
    throw invalid(`container ${JSON.stringify(container)}: only the primary container (${JSON.stringify(primary)}) is reachable`, [
      { field: 'container', rule: 'primary_only', description: `the primary container ${primary}, or empty` },
    ]);
  }
}
