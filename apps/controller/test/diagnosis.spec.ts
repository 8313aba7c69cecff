import { diagnoseInstall, type ObservedRunner } from '../src/reconcile/diagnosis';

const now = new Date('2026-04-24T12:03:11Z');
const dep = (revision: number, available: number) => ({
  metadata: { generation: 2 },
  spec: { replicas: 1, template: { metadata: { annotations: { 'paddock.dev/revision': String(revision) } } } },
  status: { observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: available, availableReplicas: available },
});

describe('install diagnosis', () => {
  it('is READY with activeRevision when the target revision is available', () => {
    const d = diagnoseInstall({ deployment: dep(3, 1), pods: [], nodes: [], warnings: [] }, 3, now);
    expect(d).toEqual({ installStatus: 'RUNNER_INSTALL_STATUS_READY', activeRevision: 3 });
  });

  it('stays PROVISIONING while an older revision is still the one available', () => {
    expect(diagnoseInstall({ deployment: dep(2, 1), pods: [], nodes: [], warnings: [] }, 3, now).installStatus).toBe('RUNNER_INSTALL_STATUS_PROVISIONING');
  });

  it('gives the seed hint for an untolerated taint, with the effect taken from the node', () => {
    const o: ObservedRunner = {
      deployment: dep(1, 0),
      pods: [{ metadata: { name: 'runner-x-1' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 node(s) had untolerated taint {workload: gpu}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.' }] } }],
      nodes: [{ metadata: { name: 'n1' }, spec: { taints: [{ key: 'workload', value: 'gpu', effect: 'NoSchedule' }] } }],
      warnings: [],
    };
    const d = diagnoseInstall(o, 1, now);
    expect(d.installStatus).toBe('RUNNER_INSTALL_STATUS_FAILED');
    expect(d.installError?.reason).toBe('Unschedulable');
    expect(d.installError?.remediationHints).toEqual(["Add toleration for taint 'workload=gpu:NoSchedule'"]);
    expect(d.installError?.occurredAt).toBe('2026-04-24T12:03:11.000Z');
  });

  it('distinguishes image pull failures, crash loops, missing runtime classes and quota refusals', () => {
    const pod = (waiting: string) => ({ status: { containerStatuses: [{ name: 'runner', restartCount: 4, state: { waiting: { reason: waiting, message: 'x' } } }] } });
    expect(diagnoseInstall({ deployment: dep(1, 0), pods: [pod('ImagePullBackOff')], nodes: [], warnings: [] }, 1, now).installError?.reason).toBe('ImagePullFailed');
    expect(diagnoseInstall({ deployment: dep(1, 0), pods: [pod('CrashLoopBackOff')], nodes: [], warnings: [] }, 1, now).installError?.reason).toBe('CrashLoopBackOff');
    const rc = diagnoseInstall({ deployment: dep(1, 0), pods: [], nodes: [], warnings: [{ reason: 'FailedCreate', message: 'pods "runner-x" is forbidden: pod rejected: RuntimeClass "kata" not found' }] }, 1, now);
    expect(rc.installError?.reason).toBe('RuntimeClassNotFound');
    expect(rc.installError?.remediationHints[0]).toContain('kata');
    const q = diagnoseInstall({ deployment: dep(1, 0), pods: [], nodes: [], warnings: [{ reason: 'FailedCreate', message: 'pods "runner-x" is forbidden: exceeded quota: q1, requested: cpu=4, used: cpu=0, limited: cpu=2' }] }, 1, now);
    expect(q.installError?.reason).toBe('QuotaExceeded');
  });
});
