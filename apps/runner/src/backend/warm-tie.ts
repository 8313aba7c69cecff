import type { z } from 'zod';

/** `text` as JSON that `schema` accepts, or undefined (a torn journal line, an annotation not the runner's). */
export function parseTieJson<T>(schema: z.ZodType<T>, text: string): T | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = schema.safeParse(parsed);
  return r.success ? r.data : undefined;
}

/**
 * A taken warm sandbox's tie to the create it serves: what a restarted runner needs to report it
 * under the create's id and keep serving it as the create asked (its environment, its labels, which
 * carry the create's persisted metadata, and its own deadline, shorter than the warm sandbox's).
 */
export interface WarmTie {
  v: 1;
  warmId: string;
  /** The warm sandbox's own deadline when taken (the backend's, which moves while it is paused). */
  warmDeadline: string;
  sandboxId: string;
  env: Record<string, string>;
  labels: Record<string, string>;
  takenAt: string;
  deadline: string;
  /** Set by a store that found the tie but not all of it (a secret value gone): the sandbox cannot be served as its create asked. */
  unrecoverable?: string;
}

/**
 * Where takes' ties are kept across a runner restart. A backend with a place of its own for them
 * (the Kubernetes backend: the pod itself) offers one as `SandboxBackend.warmTies`; otherwise the
 * runner keeps a journal in the backend's state dir.
 */
export interface WarmTieStore {
  /**
   * Records a take's tie; done when it resolves. `secretEnvNames` names the variables of `tie.env`
   * whose values are the create's delivered secrets, for a store that must keep them apart.
   */
  put(tie: WarmTie, secretEnvNames: readonly string[]): void | Promise<void>;
  /** The tie of `warmId` ended (its sandbox ended or was forgotten). */
  remove(warmId: string): void;
  /** Every tie kept, at startup, before any `put`. */
  loadAll(): WarmTie[] | Promise<WarmTie[]>;
  close(): void;
}
