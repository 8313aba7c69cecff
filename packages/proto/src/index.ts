/**
 * The coreweave.sandbox.v1 messages and service descriptor, generated from proto/ by
 * `pnpm --filter @paddock/proto generate` (protoc-gen-es, committed under src/gen).
 */
export * from './gen/coreweave/sandbox/v1/sandbox_pb.js';
export * from './gen/google/rpc/error_details_pb.js';
export * from './gen/google/rpc/status_pb.js';
