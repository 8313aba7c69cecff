import type {
  InstallError,
  ProfileBinding,
  RunnerConnectionStatus,
  RunnerInstallStatus,
  RunnerReleaseRef,
  StoredRunnerSpec,
} from '@paddock/contracts';

/** Everything the runner stream says about a live (or deleting) runner. */
export interface RunnerData {
  uid: string;
  organizationId: string;
  runnerId: string;
  zone: string;
  clusterId: string;
  clusterName: string;
  runnerGroupId: string;
  displayName: string;
  spec: StoredRunnerSpec;
  /** null = no policy set; the runner applies the platform default. */
  policy: Record<string, unknown> | null;
  /** Starts at 1, +1 per replacement; the etag is derived from it. */
  policyRevision: number;
  installStatus: RunnerInstallStatus;
  installError: InstallError | null;
  connectionStatus: RunnerConnectionStatus;
  activeRevision: number;
  /** The release being (or last) rolled out: `targetRevision`. */
  target: RunnerReleaseRef;
  allowPrivilegedProfileAnnotations: boolean;
  profileBindings: ProfileBinding[];
  /** Newest controller lease generation seen in a recorded report. */
  lastFencingToken: number;
  createdAt: string;
  updatedAt: string;
}

export type LiveRunner = { status: 'Live' } & RunnerData;
export type DeletingRunner = { status: 'Deleting' } & RunnerData;

export type RunnerState =
  | { status: 'Absent' }
  | LiveRunner
  | DeletingRunner
  | { status: 'Removed'; uid: string; organizationId: string; runnerId: string; removedAt: string };

export const initialState = (): RunnerState => ({ status: 'Absent' });
