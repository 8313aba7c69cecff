import type { V1Pod } from '@kubernetes/client-node';
import { observePod } from '../../src/backend/kubernetes';

const pod = (status: V1Pod['status'], deleting = false): V1Pod => ({
  metadata: { name: 'p', ...(deleting ? { deletionTimestamp: new Date() } : {}) },
  status,
});
type Status = NonNullable<NonNullable<V1Pod['status']>['containerStatuses']>[number];
const cs = (name: string, state: Status['state'], started?: boolean): Status => ({ name, image: 'i', imageID: '', ready: false, restartCount: 0, state, ...(started === undefined ? {} : { started }) });
const up = (name = 'sandbox', started?: boolean): Status => cs(name, { running: { startedAt: new Date() } }, started);
/** A pod whose sandbox container has a startup probe. */
const probed = (status: V1Pod['status']): V1Pod => ({
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'sandbox', startupProbe: { exec: { command: ['true'] } } }, { name: 'side' }] },
  status,
});

describe('observePod (pod phase and container state → sandbox state)', () => {
  it.each<[string, V1Pod, ReturnType<typeof observePod>]>([
    ['Pending', pod({ phase: 'Pending' }), { state: 'STATE_CREATING' }],
    ['Running', pod({ phase: 'Running', containerStatuses: [up()] }), { state: 'STATE_RUNNING' }],
    ['Running while deleted', pod({ phase: 'Running', containerStatuses: [up()] }, true), { state: 'STATE_TERMINATING' }],
    ['Running, a sidecar still waiting', pod({ phase: 'Running', containerStatuses: [up(), cs('side', { waiting: { reason: 'ContainerCreating' } })] }), { state: 'STATE_CREATING' }],
    ['Running, the startup probe not passed yet', probed({ phase: 'Running', containerStatuses: [up('sandbox', false), up('side', true)] }), { state: 'STATE_CREATING' }],
    ['Running, the startup probe passed', probed({ phase: 'Running', containerStatuses: [up('sandbox', true), up('side', true)] }), { state: 'STATE_RUNNING' }],
    [
      'the startup probe failed (killed, never started)',
      probed({ phase: 'Failed', containerStatuses: [cs('sandbox', { terminated: { exitCode: 137, reason: 'Error' } }, false), up('side', true)] }),
      { state: 'STATE_FAILED', reason: 'STARTUP_PROBE_FAILED', exitCode: 137, message: 'the startup probe did not pass within its failure threshold' },
    ],
    [
      'the sandbox container exited, a sidecar still runs',
      probed({ phase: 'Running', containerStatuses: [cs('sandbox', { terminated: { exitCode: 0, reason: 'Completed' } }, true), up('side', true)] }),
      { state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: 0 },
    ],
    [
      'an init container failed',
      pod({ phase: 'Failed', initContainerStatuses: [cs('setup', { terminated: { exitCode: 2, reason: 'Error', message: 'boom' } })], containerStatuses: [cs('sandbox', { waiting: { reason: 'PodInitializing' } })] }),
      { state: 'STATE_FAILED', reason: 'INIT_CONTAINER_FAILED', exitCode: 2, message: 'init container setup exited with status 2: boom' },
    ],
    [
      'Succeeded',
      pod({ phase: 'Succeeded', containerStatuses: [{ name: 'sandbox', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } }] }),
      { state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: 0 },
    ],
    [
      'Failed with exit 2',
      pod({ phase: 'Failed', containerStatuses: [{ name: 'sandbox', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 2 } } }] }),
      { state: 'STATE_FAILED', reason: 'EXITED', exitCode: 2 },
    ],
    [
      'OOMKilled',
      pod({ phase: 'Failed', containerStatuses: [{ name: 'sandbox', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] }),
      { state: 'STATE_FAILED', reason: 'OUT_OF_MEMORY', exitCode: 137 },
    ],
    ['DeadlineExceeded', pod({ phase: 'Failed', reason: 'DeadlineExceeded', message: 'too long' }), { state: 'STATE_FAILED', reason: 'LIFETIME_EXPIRED', message: 'too long' }],
    ['Evicted', pod({ phase: 'Failed', reason: 'Evicted', message: 'disk pressure' }), { state: 'STATE_FAILED', reason: 'EVICTED', message: 'disk pressure' }],
    [
      'ImagePullBackOff',
      pod({ phase: 'Pending', containerStatuses: [{ name: 'sandbox', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } } }] }),
      { state: 'STATE_FAILED', reason: 'IMAGE_NOT_FOUND', message: 'Back-off pulling image' },
    ],
    [
      'ErrImagePull',
      pod({ phase: 'Pending', containerStatuses: [{ name: 'sandbox', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull' } } }] }),
      { state: 'STATE_FAILED', reason: 'IMAGE_NOT_FOUND', message: 'ErrImagePull' },
    ],
  ])('%s', (_name, input, expected) => {
    expect(observePod(input)).toEqual(expected);
  });
});
