import { PaddockError, SandboxSpecSchema } from '@paddock/contracts';
import { checkPrimaryOnlyParts } from '../../src/service/primary-only-parts';

const violationsOf = (input: unknown, primaryIndex: number): string[] => {
  try {
    checkPrimaryOnlyParts(SandboxSpecSchema.parse(input), primaryIndex);
    return [];
  } catch (e) {
    if (e instanceof PaddockError) return e.violations.map((v) => `${v.field} ${v.rule}`);
    throw e;
  }
};

describe('files and GPUs on containers other than the primary', () => {
  it('are refused by name on sidecars and init containers, and admitted on the primary', () => {
    const file = [{ path: '/workspace/a', content: 'YQ==' }];
    const spec = {
      containers: [
        { name: 'app', files: file, resources: { gpu: { count: 1 } } },
        { name: 'side', files: file, resourceRequirements: { limits: { gpu: { count: 1 } } } },
      ],
      initContainers: [{ name: 'setup', files: file, resourceRequirements: { requests: { gpu: { count: 1 } } } }],
    };
    expect(violationsOf(spec, 0)).toEqual([
      'containers[1].files runner_capability',
      'containers[1].resourceRequirements.limits.gpu runner_capability',
      'initContainers[0].files runner_capability',
      'initContainers[0].resourceRequirements.requests.gpu runner_capability',
    ]);
    // Which container is the primary decides: with `side` primary, `app`'s parts are refused instead.
    expect(violationsOf({ containers: spec.containers }, 1)).toEqual(['containers[0].files runner_capability', 'containers[0].resources.gpu runner_capability']);
    expect(violationsOf({ containers: [spec.containers[0]] }, 0)).toEqual([]);
  });
});
