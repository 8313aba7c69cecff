import { create, fromJson, toJson, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import {
  ContainerSchema,
  EgressRuleSchema,
  IngressRuleSchema,
  SandboxSchema,
  SandboxSpecSchema,
  SandboxStatusSchema,
  type Sandbox,
  type SandboxSpec,
  type SandboxStatus,
} from '@paddock/proto';
import type { SandboxView } from '../sandboxes/sandbox-view';

/**
 * Both directions between the protocol's messages and the JSON the REST surface reads and
 * writes. The REST body is already the protocol's JSON mapping (camelCase, enum names, base64
 * bytes), so a request goes through `toJson` into the very parser REST uses; a response comes
 * back field by field, because Paddock's stored status carries a few shapes of its own.
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const lenient = { ignoreUnknownFields: true } as const;

/** A request spec as the REST create body's `sandbox.spec`. */
export function specToRestJson(spec: SandboxSpec | undefined): JsonObject {
  return spec ? (toJson(SandboxSpecSchema, spec) as JsonObject) : {};
}

/** The protocol's `Sandbox` for a REST view of it. */
export function sandboxFromView(view: SandboxView): Sandbox {
  return create(SandboxSchema, {
    sandboxId: view.sandboxId,
    spec: specFromStored(view.spec),
    status: statusFromView(view.status),
  });
}

/**
 * The stored spec is what REST accepted, which is a superset of the protocol's spec: a
 * container `command` may be an argv list, and a few Paddock-only fields exist. Each top-level
 * field that the protocol can carry is carried; the others have no wire representation.
 */
function specFromStored(stored: unknown): SandboxSpec {
  const spec = create(SandboxSpecSchema);
  if (!isObject(stored)) return spec;
  const { containers, initContainers, ...rest } = stored;
  carryFields(SandboxSpecSchema, spec, rest);
  spec.containers = asArray(containers).map(containerFromStored);
  spec.initContainers = asArray(initContainers).map(containerFromStored);
  return spec;
}

function containerFromStored(stored: unknown): SandboxSpec['containers'][number] {
  if (!isObject(stored)) return create(ContainerSchema);
  const { command, args, ...rest } = stored;
  const c = create(ContainerSchema);
  carryFields(ContainerSchema, c, rest);
  const argv = Array.isArray(command) ? command.filter((x): x is string => typeof x === 'string') : [];
  if (typeof command === 'string') c.command = command;
  else if (argv[0] !== undefined) c.command = argv[0];
  c.args = [...argv.slice(1), ...asArray(args).filter((x): x is string => typeof x === 'string')];
  return c;
}

function statusFromView(s: SandboxView['status']): SandboxStatus {
  const status = create(SandboxStatusSchema, {
    state: fromJson(SandboxStatusSchema, { state: s.state }, lenient).state,
    stateReason: s.stateReason ?? '',
    runnerId: s.runnerId,
    runnerGroupId: s.runnerGroupId,
    createTime: timestampFromDate(new Date(s.createTime)),
    ...(s.startTime ? { startTime: timestampFromDate(new Date(s.startTime)) } : {}),
    ...(s.endTime ? { endTime: timestampFromDate(new Date(s.endTime)) } : {}),
    ...(s.exitCode !== undefined ? { exitCode: s.exitCode } : {}),
  });
  const eff = s.effectiveResources;
  if (isObject(eff)) {
    status.effectiveResources = { $typeName: 'coreweave.sandbox.v1.Resources', cpu: typeof eff.cpu === 'string' ? eff.cpu : '', memory: typeof eff.memory === 'string' ? eff.memory : '' };
  }
  if (typeof s.effectiveMaxLifetimeSeconds === 'number') status.effectiveMaxLifetimeSeconds = s.effectiveMaxLifetimeSeconds;
  if (typeof s.effectiveRuntimeClass === 'string') status.effectiveRuntimeClass = s.effectiveRuntimeClass;
  // Paddock keeps requests and limits per container; the protocol has one sum, which only a
  // single-container sandbox can state without adding quantities.
  const perContainer = asArray(s.effectiveResourceRequirements);
  const only = perContainer.length === 1 ? perContainer[0] : undefined;
  if (isObject(only) && isObject(only.requests) && isObject(only.limits)) {
    status.effectiveResourceRequirements = {
      $typeName: 'coreweave.sandbox.v1.ResourceRequirements',
      requests: { $typeName: 'coreweave.sandbox.v1.Resources', cpu: String(only.requests.cpu), memory: String(only.requests.memory) },
      limits: { $typeName: 'coreweave.sandbox.v1.Resources', cpu: String(only.limits.cpu), memory: String(only.limits.memory) },
    };
  }
  status.effectiveEgress = rulesOf(s.effectiveEgress).map((r) => fromJson(EgressRuleSchema, legacyHostname(r), lenient));
  status.effectiveIngress = rulesOf(s.effectiveIngress).map((r) => fromJson(IngressRuleSchema, r as JsonObject, lenient));
  return status;
}

/** The protocol's egress rule names a hostname `dns_name` (REST also accepts `httpsHostname`). */
function legacyHostname(rule: Record<string, unknown>): JsonObject {
  const { httpsHostname, httpsHostnameExcept, ...rest } = rule;
  return {
    ...(rest as JsonObject),
    ...(typeof httpsHostname === 'string' ? { dnsName: httpsHostname } : {}),
    ...(Array.isArray(httpsHostnameExcept) ? { dnsNameExcept: httpsHostnameExcept as JsonValue[] } : {}),
  };
}

function rulesOf(resolved: unknown): Record<string, unknown>[] {
  return isObject(resolved) ? asArray(resolved.rules).filter(isObject) : [];
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/**
 * Copies each field of `json` the message type declares into `target`, one at a time, so a
 * Paddock-only shape inside one field does not hide the others (that one has no wire form).
 */
function carryFields<Desc extends DescMessage>(desc: Desc, target: MessageShape<Desc>, json: Record<string, unknown>): void {
  const into = target as unknown as Record<string, unknown>;
  for (const f of desc.fields) {
    const value = json[f.jsonName];
    if (value === undefined || value === null) continue;
    try {
      const one = fromJson(desc, { [f.jsonName]: value as JsonValue }, lenient) as unknown as Record<string, unknown>;
      into[f.localName] = one[f.localName];
    } catch {
      // not representable on the wire
    }
  }
}
