import { parseDuration, resolveProviderSettings, validateProviderConfig } from '../../src/api/config';
import { createLogger, timestamp } from '../../src/log';

const config = (v: Partial<Record<'token' | 'endpoint' | 'http_timeout', string | null>> = {}) => ({ token: null, endpoint: null, http_timeout: null, ...v });

describe('provider configuration', () => {
  it('COREWEAVE_API_TOKEN, COREWEAVE_API_ENDPOINT and COREWEAVE_HTTP_TIMEOUT win over the provider block', () => {
    const { settings } = resolveProviderSettings(config({ token: 'from-config', endpoint: 'https://config.example/', http_timeout: '1s' }), {
      COREWEAVE_API_TOKEN: 'from-env',
      COREWEAVE_API_ENDPOINT: 'http://127.0.0.1:8080',
      COREWEAVE_HTTP_TIMEOUT: '1m30s',
    });
    expect(settings).toEqual({ token: 'from-env', endpoint: new URL('http://127.0.0.1:8080/'), timeoutMs: 90_000 });
  });

  it('defaults: https://api.coreweave.com/ and 10 s; the provider block is used when the environment is silent', () => {
    const { settings } = resolveProviderSettings(config({ token: 't0ken' }), {});
    expect(settings).toEqual({ token: 't0ken', endpoint: new URL('https://api.coreweave.com/'), timeoutMs: 10_000 });
  });

  it('an endpoint with a path keeps it (API paths resolve under it)', () => {
    const { settings } = resolveProviderSettings(config({ token: 't', endpoint: 'https://proxy.example/coreweave' }), {});
    expect(new URL('v1/sandbox/managedRunners', settings?.endpoint).toString()).toBe('https://proxy.example/coreweave/v1/sandbox/managedRunners');
  });

  it('a missing token is an error on the token attribute that says how to set it', () => {
    const { settings, diagnostics } = resolveProviderSettings(config(), {});
    expect(settings).toBeUndefined();
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ summary: 'Missing API token', path: ['token'] });
    expect(diagnostics[0]?.detail).toContain('COREWEAVE_API_TOKEN');
  });

  it('bad endpoint and timeout are named, with where the value came from', () => {
    const { diagnostics } = resolveProviderSettings(config({ token: 't', endpoint: 'ftp://x' }), { COREWEAVE_HTTP_TIMEOUT: 'soon' });
    expect(diagnostics.map((d) => d.path)).toEqual([['endpoint'], ['http_timeout']]);
    expect(diagnostics[1]?.detail).toContain('the environment variable COREWEAVE_HTTP_TIMEOUT');
    expect(validateProviderConfig(config({ endpoint: 'not a url', http_timeout: '0s' })).map((d) => d.path)).toEqual([['endpoint'], ['http_timeout']]);
  });

  it('durations in Go syntax', () => {
    expect([parseDuration('10s'), parseDuration('1m30s'), parseDuration('250ms'), parseDuration('1.5h'), parseDuration('10'), parseDuration('')]).toEqual([
      10_000, 90_000, 250, 5_400_000, undefined, undefined,
    ]);
  });
});

describe('provider log', () => {
  it('never writes a registered secret, whatever logs it', () => {
    const lines: string[] = [];
    const log = createLogger((l) => lines.push(l));
    log.redact('pdk_secret-token');
    log.log('info', 'calling with pdk_secret-token', { header: 'Bearer pdk_secret-token' });
    expect(lines.join('')).not.toContain('pdk_secret-token');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ '@level': 'info', '@message': 'calling with ***', header: 'Bearer ***' });
  });

  it('timestamps have the six fractional digits go-plugin parses', () => {
    expect(timestamp(new Date('2026-12-01T10:00:00.123Z'))).toBe('2026-12-01T10:00:00.123000Z');
  });
});
