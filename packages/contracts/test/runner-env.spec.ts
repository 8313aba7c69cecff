import { runnerInheritedEnv } from '../src';

describe('runnerInheritedEnv', () => {
  it('keeps the system basics, locale and runner host settings, and drops everything else', () => {
    const env = runnerInheritedEnv({
      PATH: '/usr/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      PADDOCK_CAPACITY_CPU_MILLIS: '64000',
      PADDOCK_API_KEY: 'pdk_secret',
      PADDOCK_BOOTSTRAP_TOKEN: 'pdk_secret',
      DATABASE_URL: 'postgres://x',
      NATS_URL: 'nats://x',
      HOME: '/root',
      AWS_SECRET_ACCESS_KEY: 'x',
    });
    expect(env).toEqual({ PATH: '/usr/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', PADDOCK_CAPACITY_CPU_MILLIS: '64000' });
  });
});
