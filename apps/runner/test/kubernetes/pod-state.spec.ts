import type { V1Pod } from '@kubernetes/client-node';
import { observePod } from '../../src/backend/kubernetes';

const pod = (status: V1Pod['status'], deleting = false): V1Pod => ({
  metadata: { name: 'p', ...(deleting ? { deletionTimestamp: new Date() } : {}) },
  status,
});

describe('observePod (pod phase and container state → sandbox state)', () => {
  it.each<[string, V1Pod, ReturnType<typeof observePod>]>([
    ['Pending', pod({ phase: 'Pending' }), { state: 'STATE_CREATING' }],
    ['Running', pod({ phase: 'Running' }), { state: 'STATE_RUNNING' }],
    ['Running while deleted', pod({ phase: 'Running' }, true), { state: 'STATE_TERMINATING' }],
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
