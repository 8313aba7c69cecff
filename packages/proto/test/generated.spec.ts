import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ExecStreamRequestSchema, SandboxService, StreamLogsRequestSchema } from '../src/index';

describe('generated coreweave.sandbox.v1 code', () => {
  it('is what the pinned buf and protoc-gen-es produce from proto/ today', () => {
    const out = execFileSync('node', [join(__dirname, '..', 'scripts', 'generate.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toContain('src/gen matches proto/');
  });

  it('serves every SandboxService method under its published name', () => {
    expect(SandboxService.typeName).toBe('coreweave.sandbox.v1.SandboxService');
    expect(Object.values(SandboxService.method).map((m) => m.name).sort()).toEqual(
      [
        'ConnectSandbox',
        'CreateFileSystemSnapshot',
        'CreateSandbox',
        'CreateSandboxFromFile',
        'CreateSandboxFromTemplate',
        'DeleteFileSystemSnapshot',
        'DeleteSandbox',
        'Exec',
        'GetFileSystemSnapshot',
        'GetSandbox',
        'ListFileSystemSnapshots',
        'ListSandboxes',
        'PurgeSandboxes',
        'ReadFile',
        'StreamExec',
        'StreamLogs',
        'WriteFile',
      ].sort(),
    );
    expect(SandboxService.method.streamExec.methodKind).toBe('bidi_streaming');
    expect(SandboxService.method.streamLogs.methodKind).toBe('server_streaming');
  });

  it('puts fields at their published numbers on the wire', () => {
    // ExecStreamRequest.stdin is field 2 (bytes): tag 0x12, length, payload.
    const stdin = toBinary(ExecStreamRequestSchema, create(ExecStreamRequestSchema, { message: { case: 'stdin', value: new Uint8Array([7]) } }));
    expect([...stdin]).toEqual([0x12, 1, 7]);
    // StreamLogsRequest.resume_log_offset is field 8 (uint64): tag 0x40.
    const logs = toBinary(StreamLogsRequestSchema, create(StreamLogsRequestSchema, { resumeLogOffset: 5n }));
    expect([...logs]).toEqual([0x40, 5]);
    expect(fromBinary(StreamLogsRequestSchema, logs).resumeLogOffset).toBe(5n);
  });
});
