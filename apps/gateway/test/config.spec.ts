import { parseGatewayEnv } from '../src/config/env';

const base = { DATABASE_URL: 'postgres://x@127.0.0.1/db', NATS_URL: 'nats://127.0.0.1:4222' };

describe('gateway configuration', () => {
  it('trusts no proxy by default; reads true, false and proxy address lists', () => {
    expect(parseGatewayEnv(base).trustProxy).toBe(false);
    expect(parseGatewayEnv({ ...base, GATEWAY_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(parseGatewayEnv({ ...base, GATEWAY_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(parseGatewayEnv({ ...base, GATEWAY_TRUST_PROXY: 'loopback, 10.0.0.0/8, 192.0.2.10, fd00::/8' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      '192.0.2.10',
      'fd00::/8',
    ]);
  });

  it('refuses a proxy list it cannot read, naming the variable and each bad entry', () => {
    expect(() => parseGatewayEnv({ ...base, GATEWAY_TRUST_PROXY: 'loopback,proxy.example,10.0.0.0/33' })).toThrow(
      'GATEWAY_TRUST_PROXY: must be false, true or a list of proxy addresses/prefixes; cannot read "proxy.example", "10.0.0.0/33"',
    );
    expect(() => parseGatewayEnv({ ...base, GATEWAY_TRUST_PROXY: '2' })).toThrow(/GATEWAY_TRUST_PROXY: .*cannot read "2"/);
  });

  it('reads the console origins allowed by CORS, and refuses an entry that is not an origin', () => {
    expect(parseGatewayEnv(base).consoleOrigins).toEqual([]);
    expect(parseGatewayEnv({ ...base, GATEWAY_CONSOLE_ORIGINS: 'http://127.0.0.1:8080, https://console.example.com/' }).consoleOrigins).toEqual([
      'http://127.0.0.1:8080',
      'https://console.example.com',
    ]);
    expect(() => parseGatewayEnv({ ...base, GATEWAY_CONSOLE_ORIGINS: 'http://127.0.0.1:8080/console,ftp://x,*' })).toThrow(
      'GATEWAY_CONSOLE_ORIGINS: must be origins like http://127.0.0.1:8080 (scheme, host, port; no path); cannot read "http://127.0.0.1:8080/console", "ftp://x", "*"',
    );
  });

  it('serves gRPC on 8082 unless told otherwise, with TLS only when both certificate and key are given', () => {
    expect(parseGatewayEnv(base).grpcPort).toBe(8082);
    expect(parseGatewayEnv(base).grpcTls).toBeUndefined();
    expect(parseGatewayEnv({ ...base, GATEWAY_GRPC_PORT: '0' }).grpcPort).toBe(0);
    expect(parseGatewayEnv({ ...base, GATEWAY_GRPC_TLS_CERT: '/c.pem', GATEWAY_GRPC_TLS_KEY: '/k.pem' }).grpcTls).toEqual({ certFile: '/c.pem', keyFile: '/k.pem' });
    expect(() => parseGatewayEnv({ ...base, GATEWAY_GRPC_TLS_CERT: '/c.pem' })).toThrow('GATEWAY_GRPC_TLS_CERT and GATEWAY_GRPC_TLS_KEY: set both (TLS) or neither (cleartext)');
    expect(() => parseGatewayEnv({ ...base, GATEWAY_GRPC_PORT: '70000' })).toThrow(/GATEWAY_GRPC_PORT/);
  });
});
