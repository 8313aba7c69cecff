import type { EventMetadata } from '@paddock/event-store';

/** Metadata on every runner event: who, for which organization, when (the app clock). */
export function eventMetadata(organizationId: string, actor: string, at: Date, requestId?: string): EventMetadata {
  return { actor, organizationId, at: at.toISOString(), ...(requestId ? { requestId } : {}) };
}
