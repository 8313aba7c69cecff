import { z } from 'zod';

/** Enums are serialized by their full names, as the product's API does. */
export const RUNNER_INSTALL_STATUSES = [
  'RUNNER_INSTALL_STATUS_UNSPECIFIED',
  'RUNNER_INSTALL_STATUS_PENDING',
  'RUNNER_INSTALL_STATUS_PROVISIONING',
  'RUNNER_INSTALL_STATUS_READY',
  'RUNNER_INSTALL_STATUS_FAILED',
  'RUNNER_INSTALL_STATUS_DELETING',
] as const;
export const RunnerInstallStatusSchema = z.enum(RUNNER_INSTALL_STATUSES);
export type RunnerInstallStatus = z.infer<typeof RunnerInstallStatusSchema>;

export const RUNNER_CONNECTION_STATUSES = [
  'RUNNER_CONNECTION_STATUS_UNSPECIFIED',
  'RUNNER_CONNECTION_STATUS_CONNECTED',
  'RUNNER_CONNECTION_STATUS_DISCONNECTED',
] as const;
export const RunnerConnectionStatusSchema = z.enum(RUNNER_CONNECTION_STATUSES);
export type RunnerConnectionStatus = z.infer<typeof RunnerConnectionStatusSchema>;

export const RELEASE_CHANNELS = ['RELEASE_CHANNEL_UNSPECIFIED', 'RELEASE_CHANNEL_STABLE', 'RELEASE_CHANNEL_RAPID'] as const;
export const ReleaseChannelSchema = z.enum(RELEASE_CHANNELS);
export type ReleaseChannel = z.infer<typeof ReleaseChannelSchema>;

export const MANAGEMENT_MODES = [
  'MANAGEMENT_MODE_UNSPECIFIED',
  'MANAGEMENT_MODE_MANAGED',
  'MANAGEMENT_MODE_SELF_MANAGED',
] as const;
export const ManagementModeSchema = z.enum(MANAGEMENT_MODES);
export type ManagementMode = z.infer<typeof ManagementModeSchema>;

/** Sandbox lifecycle states. */
export const SANDBOX_STATES = [
  'STATE_UNSPECIFIED',
  'STATE_PENDING',
  'STATE_CREATING',
  'STATE_RUNNING',
  'STATE_TERMINATING',
  'STATE_COMPLETED',
  'STATE_FAILED',
  /** Frozen by a pause (or the idle timeout): processes keep their memory; clients treat it as ready. */
  'STATE_PAUSED',
] as const;
export const SandboxStateSchema = z.enum(SANDBOX_STATES);
export type SandboxState = z.infer<typeof SandboxStateSchema>;

export const TERMINAL_SANDBOX_STATES: readonly SandboxState[] = ['STATE_COMPLETED', 'STATE_FAILED'];
export function isTerminalSandboxState(s: SandboxState): boolean {
  return TERMINAL_SANDBOX_STATES.includes(s);
}

/**
 * Lifecycle order: a sandbox's state only ever moves to a higher rank, whatever order the news
 * arrives in (the runner's records, the gateway's rows and its SQL guards all rank by this).
 * The terminal states share the top rank; UNSPECIFIED is below everything. RUNNING and PAUSED
 * share a rank: between them the newer event sequence wins.
 */
export const SANDBOX_STATE_RANK: Readonly<Record<SandboxState, number>> = {
  STATE_UNSPECIFIED: -1,
  STATE_PENDING: 0,
  STATE_CREATING: 1,
  STATE_RUNNING: 2,
  // Pausing and resuming move between RUNNING and PAUSED, both ways: the one pair of states of
  // equal rank, ordered by the event sequence alone.
  STATE_PAUSED: 2,
  STATE_TERMINATING: 3,
  STATE_COMPLETED: 4,
  STATE_FAILED: 4,
};
/** The rank the terminal states share. */
export const TERMINAL_SANDBOX_STATE_RANK = 4;

/** Why a sandbox reached a terminal (or terminating) state. */
export const SANDBOX_STATE_REASONS = [
  'EXITED',
  'LIFETIME_EXPIRED',
  'STOPPED_BY_USER',
  'OUT_OF_MEMORY',
  'FAILED_TO_START',
  'IMAGE_NOT_FOUND',
  /** The registry refused the runner's credentials (or anonymous access) to the image. */
  'IMAGE_PULL_UNAUTHORIZED',
  /** A manifest or layer did not hash to its digest: the image was refused. */
  'IMAGE_DIGEST_MISMATCH',
  /** The registry could not be reached, or the image cannot be unpacked. */
  'IMAGE_PULL_FAILED',
  /** The image's tag resolved to a digest the policy's allowed images do not pin. */
  'IMAGE_POLICY_REJECTED',
  'RUNNER_LOST',
  'RUNNER_DELETED',
  /** Its runner was stopped with the platform that started it (`pnpm start` stopped). */
  'RUNNER_STOPPED',
  'REAPED_UNKNOWN',
  'POLICY_REJECTED',
  'EVICTED',
  /** An init container exited non-zero: the sandbox's main containers never started. */
  'INIT_CONTAINER_FAILED',
  /** The primary container's startup probe reached its failure threshold. */
  'STARTUP_PROBE_FAILED',
  /** PAUSED: asked for by the user (`:pause`). */
  'PAUSED_BY_USER',
  /** PAUSED: no exec, file or log traffic for the policy's `lifecycle.idleTimeoutSeconds`. */
  'IDLE_TIMEOUT',
] as const;
export const SandboxStateReasonSchema = z.enum(SANDBOX_STATE_REASONS);
export type SandboxStateReason = z.infer<typeof SandboxStateReasonSchema>;

export const ROLES = ['SANDBOX_ADMIN', 'SANDBOX_USER'] as const;
export const RoleSchema = z.enum(ROLES);
export type Role = z.infer<typeof RoleSchema>;
