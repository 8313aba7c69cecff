import { z } from 'zod';
import { RunnerInstallStatusSchema } from './enums';

/** Structured install failure, shown on the runner as `installError`. */
export const InstallErrorSchema = z.object({
  reason: z.string().min(1),
  message: z.string(),
  remediationHints: z.array(z.string()).default([]),
  diagnosticDetail: z.string().optional(),
  occurredAt: z.string(),
});
export type InstallError = z.infer<typeof InstallErrorSchema>;

/**
 * Published by the controller of a cluster on `subjects.installReport(clusterId)` whenever its
 * observation of a runner's deployment changes (and periodically, so a lost message heals).
 * `gone: true` means every object of a deleting runner has been torn down.
 */
export const RunnerInstallReportSchema = z.object({
  runnerId: z.string().min(1),
  organizationId: z.string().min(1),
  clusterId: z.string().min(1),
  installStatus: RunnerInstallStatusSchema,
  activeRevision: z.number().int().nonnegative().optional(),
  installError: InstallErrorSchema.nullable().optional(),
  gone: z.boolean().default(false),
  controllerId: z.string().min(1),
  /** The controller's lease generation; the control plane ignores reports older than the latest seen. */
  fencingToken: z.number().int().nonnegative().default(0),
  reportedAt: z.string(),
});
export type RunnerInstallReport = z.infer<typeof RunnerInstallReportSchema>;
