import { Code, ConnectError } from '@connectrpc/connect';
import { PADDOCK_ERROR_DOMAIN, PaddockError } from '@paddock/contracts';
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from '@paddock/proto';
import { notImplemented, toConnectError } from '../src/grpc/status-mapping';

describe('Paddock errors as google.rpc.Status', () => {
  it('keeps code, message and reason, and adds RetryInfo only where a retry can succeed', () => {
    const unavailable = toConnectError(new PaddockError('unavailable', 'runner r-1 is not reachable', { reason: 'CWSANDBOX_RUNNER_UNAVAILABLE', metadata: { runnerId: 'r-1' } }));
    expect([unavailable.code, unavailable.rawMessage]).toEqual([Code.Unavailable, 'runner r-1 is not reachable']);
    const info = unavailable.findDetails(ErrorInfoSchema)[0];
    expect([info?.reason, info?.domain, info?.metadata]).toEqual(['CWSANDBOX_RUNNER_UNAVAILABLE', PADDOCK_ERROR_DOMAIN, { runnerId: 'r-1' }]);
    expect(unavailable.findDetails(RetryInfoSchema)[0]?.retryDelay?.seconds).toBe(1n);
    for (const code of ['resource_exhausted', 'aborted'] as const) expect(toConnectError(new PaddockError(code, 'x')).findDetails(RetryInfoSchema)).toHaveLength(1);

    const notFound = toConnectError(new PaddockError('not_found', 'sandbox sb-1 not found', { reason: 'CWSANDBOX_SANDBOX_NOT_FOUND' }));
    expect([notFound.code, notFound.findDetails(RetryInfoSchema)]).toEqual([Code.NotFound, []]);
  });

  it('carries field violations as BadRequest', () => {
    const e = toConnectError(new PaddockError('invalid_argument', 'bad', { reason: 'CWSANDBOX_INVALID_REQUEST', violations: [{ field: 'sandbox.spec.containers.0.image', rule: 'required', description: 'an image' }] }));
    expect(e.code).toBe(Code.InvalidArgument);
    expect(e.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => [v.field, v.description])).toEqual([['sandbox.spec.containers.0.image', 'an image']]);
  });

  it('maps every Paddock code and hides unexpected exceptions as REST does', () => {
    const codes = {
      invalid_argument: Code.InvalidArgument,
      failed_precondition: Code.FailedPrecondition,
      not_found: Code.NotFound,
      already_exists: Code.AlreadyExists,
      aborted: Code.Aborted,
      permission_denied: Code.PermissionDenied,
      unauthenticated: Code.Unauthenticated,
      resource_exhausted: Code.ResourceExhausted,
      unavailable: Code.Unavailable,
      unimplemented: Code.Unimplemented,
      deadline_exceeded: Code.DeadlineExceeded,
      internal: Code.Internal,
    } as const;
    for (const [code, grpc] of Object.entries(codes)) expect(toConnectError(new PaddockError(code as keyof typeof codes, 'm')).code).toBe(grpc);
    const hidden = toConnectError(new Error('pg: connection refused at 10.0.0.3'));
    expect([hidden.code, hidden.rawMessage, hidden.details]).toEqual([Code.Internal, 'internal error; retry later or report the request id', []]);
    const already = new ConnectError('kept', Code.Canceled);
    expect(toConnectError(already)).toBe(already);
  });

  it('names what is not implemented, with reason CWSANDBOX_NOT_IMPLEMENTED', () => {
    const e = notImplemented('CreateSandboxFromTemplate (sandbox templates)');
    expect([e.code, e.rawMessage, e.findDetails(ErrorInfoSchema)[0]?.reason]).toEqual([
      Code.Unimplemented,
      'CreateSandboxFromTemplate (sandbox templates) is not implemented by Paddock yet',
      'CWSANDBOX_NOT_IMPLEMENTED',
    ]);
  });
});
