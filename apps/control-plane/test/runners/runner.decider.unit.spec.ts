import { PaddockError, type RunnerEvent, type RunnerInstallReport } from '@paddock/contracts';
import { checkProfileTemplate } from '@paddock/policy';
import { decide, evolve, initialState, privilegedTemplateMessage } from '../../src/modules/runners/domain/runner.decider';
import type { RunnerCommand } from '../../src/modules/runners/domain/runner.commands';
import { defaultRunnerSpec } from '../../src/modules/runners/domain/runner.defaults';
import { policyEtag } from '../../src/modules/runners/domain/etag';

/** given(events) → when(command) → then(events) | refuses(code) | staysQuiet(). */
function spec(given: RunnerEvent[]) {
  const state = given.reduce(evolve, initialState());
  return {
    when(command: RunnerCommand) {
      const run = (): RunnerEvent[] => decide(command, state);
      return {
        then: (expected: RunnerEvent[]) => expect(run()).toEqual(expected),
        emits: (...types: RunnerEvent['type'][]) => expect(run().map((e) => e.type)).toEqual(types),
        refuses: (code: PaddockError['code'], message?: string | RegExp) => {
          let caught: unknown;
          try {
            run();
          } catch (e) {
            caught = e;
          }
          expect(caught).toBeInstanceOf(PaddockError);
          expect((caught as PaddockError).code).toBe(code);
          if (message !== undefined) expect((caught as PaddockError).message).toMatch(message);
        },
        staysQuiet: () => expect(run()).toEqual([]),
      };
    },
  };
}

const now = new Date('2026-11-29T10:00:00.000Z');
const UID = '00000000-0000-4000-8000-000000000001';
const release = { revision: 3, version: '1.0.0', image: 'img:1.0.0' };
const created: RunnerEvent = {
  type: 'RunnerCreated',
  data: {
    uid: UID,
    organizationId: 'org-1',
    runnerId: 'r1',
    zone: 'us-east-1',
    clusterId: 'c1',
    clusterName: 'cluster-1',
    runnerGroupId: 'default',
    displayName: '',
    spec: defaultRunnerSpec(),
    policy: {},
    policyRevision: 1,
    release,
    createdAt: now.toISOString(),
  },
};
const deleting: RunnerEvent = { type: 'RunnerDeletionRequested', data: { requestedAt: now.toISOString() } };
const etag1 = policyEtag(UID, 1);

const createCommand: RunnerCommand = {
  type: 'CreateRunner',
  data: {
    uid: UID,
    organizationId: 'org-1',
    runnerId: 'r1',
    zone: 'us-east-1',
    cluster: { id: 'c1', name: 'cluster-1' },
    runnerGroupId: 'default',
    displayName: '',
    spec: defaultRunnerSpec(),
    policy: {},
    release,
    now,
  },
};

const rep = (extra: Partial<RunnerInstallReport> = {}): RunnerCommand => ({
  type: 'ApplyInstallReport',
  data: {
    report: {
      runnerId: 'r1',
      organizationId: 'org-1',
      clusterId: 'c1',
      installStatus: 'RUNNER_INSTALL_STATUS_READY',
      activeRevision: 3,
      installError: null,
      gone: false,
      controllerId: 'ctl',
      fencingToken: 5,
      reportedAt: now.toISOString(),
      ...extra,
    },
    now,
  },
});

describe('CreateRunner', () => {
  it('emits RunnerCreated at policy revision 1', () => spec([]).when(createCommand).then([created]));
  it('refuses a stream that already exists', () => spec([created]).when(createCommand).refuses('already_exists'));
});

describe('UpdateRunnerSettings (optimistic concurrency on the policy)', () => {
  const update = (data: Partial<Extract<RunnerCommand, { type: 'UpdateRunnerSettings' }>['data']>): RunnerCommand => ({
    type: 'UpdateRunnerSettings',
    data: { runnerRef: 'r1', settings: {}, paths: [], now, ...data },
  });
  it('emits RunnerPolicyReplaced with the next revision for the current etag', () =>
    spec([created])
      .when(update({ paths: ['policy'], policy: { document: { constraints: {} }, etag: etag1, explicit: true } }))
      .then([{ type: 'RunnerPolicyReplaced', data: { policy: { constraints: {} }, policyRevision: 2, updatedAt: now.toISOString() } }]));
  it('refuses a stale etag with the documented message', () =>
    spec([created])
      .when(update({ policy: { document: { constraints: {} }, etag: 'stale', explicit: true } }))
      .refuses('failed_precondition', 'managed_runner.etag is stale; reload the runner and retry'));
  it('refuses a policy mask without an etag', () =>
    spec([created]).when(update({ policy: { document: {}, etag: undefined, explicit: true } })).refuses('invalid_argument', /etag is required/));
  it('refuses removing the policy', () =>
    spec([created]).when(update({ policy: { document: null, etag: etag1, explicit: true } })).refuses('invalid_argument', /cannot be removed/));
  it('stays quiet when a whole-resource replace carries the same policy and settings', () =>
    spec([created]).when(update({ settings: { displayName: '', spec: defaultRunnerSpec() }, policy: { document: {}, etag: undefined, explicit: false } })).staysQuiet());
  it('emits RunnerSettingsUpdated with the merged spec for a release-channel switch', () =>
    spec([created])
      .when(update({ paths: ['spec.release_channel'], settings: { spec: { releaseChannel: 'RELEASE_CHANNEL_RAPID' } } }))
      .then([
        {
          type: 'RunnerSettingsUpdated',
          data: { spec: { ...defaultRunnerSpec(), releaseChannel: 'RELEASE_CHANNEL_RAPID' }, paths: ['spec.release_channel'], updatedAt: now.toISOString() },
        },
      ]));
  it('refuses changes to a deleting runner', () =>
    spec([created, deleting]).when(update({ settings: { displayName: 'x' } })).refuses('failed_precondition', /being deleted/));
  it('refuses an unknown runner', () => spec([]).when(update({ settings: { displayName: 'x' } })).refuses('not_found'));
  it('keeps the etag across settings changes and moves it with the policy', () => {
    const afterSettings = [created, { type: 'RunnerSettingsUpdated', data: { displayName: 'x', paths: [], updatedAt: now.toISOString() } } as RunnerEvent].reduce(evolve, initialState());
    expect(afterSettings.status === 'Live' && policyEtag(afterSettings.uid, afterSettings.policyRevision)).toBe(etag1);
    expect(policyEtag(UID, 2)).not.toBe(etag1);
  });
});

describe('RequestRunnerUpdate', () => {
  const cmd = (revision: number): RunnerCommand => ({
    type: 'RequestRunnerUpdate',
    data: { runnerRef: 'r1', latest: { revision, version: `v${revision}`, image: `img:${revision}` }, trigger: 'user', now },
  });
  it('emits RunnerUpdateRequested for a newer release', () => spec([created]).when(cmd(4)).emits('RunnerUpdateRequested'));
  it('refuses when no newer release exists', () => spec([created]).when(cmd(3)).refuses('failed_precondition', /no update available/));
  it('refuses a deleting runner', () => spec([created, deleting]).when(cmd(4)).refuses('failed_precondition'));
});

describe('ApplyInstallReport (fencing, DELETING only left by gone)', () => {
  it('emits status and revision changes', () => spec([created]).when(rep()).emits('RunnerInstallStatusChanged', 'RunnerRevisionActivated'));
  it('stays quiet for a report older than the newest fencing token', () => {
    const fenced = spec([created, ...decide(rep({ fencingToken: 9, installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING', activeRevision: 0 }), [created].reduce(evolve, initialState()))]);
    fenced.when(rep({ fencingToken: 8 })).staysQuiet();
  });
  it('stays quiet for a report of another cluster', () => spec([created]).when(rep({ clusterId: 'c2' })).staysQuiet());
  it('stays quiet when nothing changed', () => {
    const ready = [created, ...decide(rep(), [created].reduce(evolve, initialState()))];
    spec(ready).when(rep()).staysQuiet();
  });
  it('removes a deleting runner on gone', () => spec([created, deleting]).when(rep({ gone: true })).emits('RunnerRemoved'));
  it('keeps DELETING when a late READY arrives', () => spec([created, deleting]).when(rep()).staysQuiet());
  it('ignores gone for a runner nobody deleted', () => spec([created]).when(rep({ gone: true })).staysQuiet());
  it('clears installError when the runner recovers', () => {
    const failed = [
      created,
      ...decide(
        rep({ installStatus: 'RUNNER_INSTALL_STATUS_FAILED', activeRevision: 0, installError: { reason: 'x', message: 'y', remediationHints: [], occurredAt: now.toISOString() } }),
        [created].reduce(evolve, initialState()),
      ),
    ];
    const next = decide(rep({ installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING', activeRevision: 0 }), failed.reduce(evolve, initialState()));
    expect(next).toMatchObject([{ type: 'RunnerInstallStatusChanged', data: { installError: null } }]);
  });
});

describe('RecordRunnerConnection (transitions only)', () => {
  const cmd = (status: 'RUNNER_CONNECTION_STATUS_CONNECTED' | 'RUNNER_CONNECTION_STATUS_DISCONNECTED'): RunnerCommand => ({
    type: 'RecordRunnerConnection',
    data: { status, at: now },
  });
  it('emits on a transition', () => spec([created]).when(cmd('RUNNER_CONNECTION_STATUS_CONNECTED')).emits('RunnerConnectionChanged'));
  it('stays quiet in steady state', () => spec([created]).when(cmd('RUNNER_CONNECTION_STATUS_DISCONNECTED')).staysQuiet());
  it('stays quiet for an unknown runner', () => spec([]).when(cmd('RUNNER_CONNECTION_STATUS_CONNECTED')).staysQuiet());
});

describe('RequestRunnerDeletion', () => {
  const cmd: RunnerCommand = { type: 'RequestRunnerDeletion', data: { runnerRef: 'r1', now } };
  it('emits RunnerDeletionRequested', () => spec([created]).when(cmd).emits('RunnerDeletionRequested'));
  it('stays quiet when already deleting', () => spec([created, deleting]).when(cmd).staysQuiet());
  it('refuses an unknown runner', () => spec([]).when(cmd).refuses('not_found'));
});

describe('UpdateLegacyProfileSettings (privileged templates need the flag)', () => {
  const binding = { profileTemplateId: 't1', isDefault: true };
  const verdict = { profileTemplateId: 't1', privilegedFields: ['securityContext.appArmorProfile', 'securityContext.seccompProfile'] };
  const cmd = (data: Partial<Extract<RunnerCommand, { type: 'UpdateLegacyProfileSettings' }>['data']>): RunnerCommand => ({
    type: 'UpdateLegacyProfileSettings',
    data: { runnerRef: 'r1', templateVerdicts: [verdict], now, ...data },
  });
  it('refuses a privileged template without the flag, in checkProfileTemplate wording', () => {
    spec([created]).when(cmd({ profileBindings: [binding] })).refuses('permission_denied', privilegedTemplateMessage(0, verdict));
    const policyWording = checkProfileTemplate(
      { spec: { podTemplateJson: JSON.stringify({ securityContext: { appArmorProfile: {}, seccompProfile: {} } }) } },
      { bindingIndex: 0, templateId: 't1', allowPrivilegedProfileAnnotations: false },
    );
    expect(policyWording.ok === false && policyWording.message).toBe(privilegedTemplateMessage(0, verdict));
  });
  it('emits the flag and the bindings when both are set together', () =>
    spec([created]).when(cmd({ allowPrivilegedProfileAnnotations: true, profileBindings: [binding] })).emits('RunnerPrivilegedProfilePostureChanged', 'RunnerProfileBindingsReplaced'));
  it('refuses bindings without exactly one default', () =>
    spec([created]).when(cmd({ allowPrivilegedProfileAnnotations: true, profileBindings: [{ profileTemplateId: 't1' }] })).refuses('invalid_argument'));
  it('stays quiet when the flag is already in that state', () => spec([created]).when(cmd({ allowPrivilegedProfileAnnotations: false, templateVerdicts: [] })).staysQuiet());
});
