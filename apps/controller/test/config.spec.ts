import { parseEnv } from '../src/config';

describe('controller configuration: the default runner\'s policy', () => {
  const base = { PADDOCK_API_KEY: 'token', PADDOCK_DECLARE_DEFAULT_RUNNER: 'local' };

  it('reads the policy the default runner is declared with as a JSON object', () => {
    const policy = { constraints: { resources: { defaultCpuRequest: '50m', defaultCpu: '1' } } };
    expect(parseEnv({ ...base, PADDOCK_DECLARE_DEFAULT_RUNNER_POLICY: JSON.stringify(policy) }).PADDOCK_DECLARE_DEFAULT_RUNNER_POLICY).toEqual(policy);
    expect(parseEnv(base).PADDOCK_DECLARE_DEFAULT_RUNNER_POLICY).toBeUndefined();
  });

  it('refuses a policy that is not a JSON object, naming the setting', () => {
    for (const bad of ['{not json', '[1]', '"text"']) {
      expect(() => parseEnv({ ...base, PADDOCK_DECLARE_DEFAULT_RUNNER_POLICY: bad })).toThrow(
        /PADDOCK_DECLARE_DEFAULT_RUNNER_POLICY: must be a JSON object/,
      );
    }
  });
});
