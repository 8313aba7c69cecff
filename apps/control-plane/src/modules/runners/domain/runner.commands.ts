import type {
  ProfileBinding,
  RunnerConnectionStatus,
  RunnerInstallReport,
  RunnerReleaseRef,
  StoredRunnerSpec,
} from '@paddock/contracts';

/** What `checkProfileTemplate` found in one bound template (resolved by the handler). */
export interface ProfileTemplateVerdict {
  profileTemplateId: string;
  /** Privileged pod-spec fields and annotations, as `findPrivilegedPodFields` names them. */
  privilegedFields: string[];
}

/** Settings a v1 PATCH may change (besides the policy); each present key is the new whole value. */
export interface RunnerSettingsChange {
  displayName?: string;
  zone?: string;
  runnerGroupId?: string;
  /** Spec members to replace (a whole-`spec` mask sends all four); merged over the current spec. */
  spec?: Partial<StoredRunnerSpec>;
}

/**
 * Domain commands. Time, ids and external facts (the cluster, the latest release, template
 * verdicts) are resolved by the handler and arrive here, so `decide` stays pure and retry-safe.
 * `runnerRef` is how the caller named the runner (for error messages).
 */
export type RunnerCommand =
  | {
      type: 'CreateRunner';
      data: {
        uid: string;
        organizationId: string;
        runnerId: string;
        zone: string;
        cluster: { id: string; name: string };
        runnerGroupId: string;
        displayName: string;
        spec: StoredRunnerSpec;
        policy: Record<string, unknown> | null;
        release: RunnerReleaseRef;
        now: Date;
      };
    }
  | {
      type: 'UpdateRunnerSettings';
      data: {
        runnerRef: string;
        settings: RunnerSettingsChange;
        /** Mask paths (snake_case) the change came from, recorded with the event. */
        paths: string[];
        /** Present when the mask covers the policy; `explicit` when it names `policy` itself. */
        policy?: { document: Record<string, unknown> | null; etag: string | undefined; explicit: boolean };
        now: Date;
      };
    }
  | { type: 'RequestRunnerUpdate'; data: { runnerRef: string; latest: RunnerReleaseRef; trigger: 'user' | 'maintenance'; now: Date } }
  | { type: 'ApplyInstallReport'; data: { report: RunnerInstallReport; now: Date } }
  | { type: 'RecordRunnerConnection'; data: { status: RunnerConnectionStatus; at: Date } }
  | { type: 'RequestRunnerDeletion'; data: { runnerRef: string; now: Date } }
  | {
      type: 'UpdateLegacyProfileSettings';
      data: {
        runnerRef: string;
        allowPrivilegedProfileAnnotations?: boolean;
        profileBindings?: ProfileBinding[];
        /** Verdicts for every template bound after the change. */
        templateVerdicts: ProfileTemplateVerdict[];
        now: Date;
      };
    };
