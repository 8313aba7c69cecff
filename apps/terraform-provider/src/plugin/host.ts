import { conform, type CtyType, type Value } from '../cty/value';
import { decodeValue, encodeValue } from '../cty/msgpack';
import { error, type AttributePath, type Diagnostic } from '../framework/diagnostics';
import type { DataSourceType, ProviderDefinition, ResourceType } from '../framework/provider';
import { attributeType, objectType, type Attribute, type Schema } from '../framework/schema';
import type { Logger } from '../log';
import type {
  ApplyResourceChangeRequest,
  AttributePathStep,
  ConfigRequest,
  ConfigureRequest,
  DynamicValue,
  GetProviderSchemaResponse,
  ImportResourceStateRequest,
  PlanResourceChangeRequest,
  ProtoAttribute,
  ProtoDiagnostic,
  ProtoSchema,
  ReadResourceRequest,
  UpgradeResourceStateRequest,
  WithDiagnostics,
} from './messages';

/**
 * The translation between tfplugin6 messages and a {@link ProviderDefinition}: values decoded
 * from msgpack with the schema's type on the way in, encoded on the way out, diagnostics and
 * attribute paths in their protocol form. A handler never throws: a failure becomes an error
 * diagnostic, which Terraform shows instead of a broken plugin.
 */

function protoAttribute(name: string, a: Attribute): ProtoAttribute {
  return {
    name,
    type: a.kind === 'nested' ? Buffer.alloc(0) : Buffer.from(JSON.stringify(attributeType(a))),
    ...(a.kind === 'nested'
      ? { nested_type: { attributes: protoAttributes(a.attributes), nesting: a.nesting.toUpperCase() as 'SINGLE' | 'LIST' | 'SET' | 'MAP' } }
      : {}),
    description: a.description,
    description_kind: 'MARKDOWN',
    required: a.required ?? false,
    optional: a.optional ?? false,
    computed: a.computed ?? false,
    sensitive: a.sensitive ?? false,
  };
}

const protoAttributes = (attrs: Schema['attributes']): ProtoAttribute[] =>
  Object.entries(attrs)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, a]) => protoAttribute(name, a));

export function protoSchema(s: Schema): ProtoSchema {
  return { version: s.version, block: { version: s.version, attributes: protoAttributes(s.attributes), block_types: [], description: s.description, description_kind: 'MARKDOWN' } };
}

const protoPath = (path: AttributePath): { steps: AttributePathStep[] } => ({
  steps: path.map((s) => (typeof s === 'string' ? { attribute_name: s } : typeof s === 'number' ? { element_key_int: s } : { element_key_string: s.key })),
});

/**
 * Terraform (1.11) finds the configuration line of a diagnostic by walking its path through
 * nested *blocks* only; a path into a nested *attribute* (`spec = { ... }`) is not found at all
 * and the diagnostic falls back to the whole resource. Every object of this provider is a nested
 * attribute, so the path sent is the top-level attribute (`spec`, `policy`): Terraform then quotes
 * that attribute's line, and the detail text names the full path.
 */
export function protoDiagnostics(diags: readonly Diagnostic[]): ProtoDiagnostic[] {
  return diags.map((d) => ({
    severity: d.severity === 'error' ? 'ERROR' : 'WARNING',
    summary: d.summary,
    detail: d.detail,
    ...(d.path && d.path.length > 0 ? { attribute: protoPath(d.path.slice(0, 1)) } : {}),
  }));
}

function decode(type: CtyType, v: DynamicValue | undefined): Value {
  if (v?.msgpack && v.msgpack.length > 0) return decodeValue(type, v.msgpack);
  if (v?.json && v.json.length > 0) return conform(type, JSON.parse(Buffer.from(v.json).toString('utf8')) as Value);
  return null;
}
const encode = (type: CtyType, v: Value): DynamicValue => ({ msgpack: encodeValue(type, v) });

type PlanResponse = WithDiagnostics & { planned_state?: DynamicValue; requires_replace?: { steps: AttributePathStep[] }[]; planned_private?: Uint8Array };

const failure = (e: unknown, doing: string): Diagnostic =>
  error('Provider error', `${doing}: ${e instanceof Error ? e.message : String(e)}. This is a bug in the coreweave provider; please report it with the command you ran.`);

export class ProviderHost<C> {
  private context: C | undefined;
  private readonly resources: Map<string, ResourceType<C>>;
  private readonly dataSources: Map<string, DataSourceType<C>>;

  constructor(
    private readonly def: ProviderDefinition<C>,
    private readonly log: Logger,
  ) {
    this.resources = new Map(def.resources.map((r) => [r.typeName, r]));
    this.dataSources = new Map(def.dataSources.map((d) => [d.typeName, d]));
  }

  /** Runs a handler, turning any exception into an error diagnostic in the response. */
  private async guard<R extends WithDiagnostics>(doing: string, fallback: Omit<R, 'diagnostics'>, fn: () => R | Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (e) {
      this.log.log('error', `${doing} failed`, { error: e instanceof Error ? e.stack : String(e) });
      return { ...fallback, diagnostics: protoDiagnostics([failure(e, doing)]) } as R;
    }
  }

  private resource(typeName: string): ResourceType<C> {
    const r = this.resources.get(typeName);
    if (!r) throw new Error(`this provider has no resource type ${typeName}`);
    return r;
  }

  private dataSource(typeName: string): DataSourceType<C> {
    const d = this.dataSources.get(typeName);
    if (!d) throw new Error(`this provider has no data source ${typeName}`);
    return d;
  }

  private configured(): C {
    if (this.context === undefined) throw new Error('the provider was used before Terraform configured it');
    return this.context;
  }

  getProviderSchema(): GetProviderSchemaResponse {
    return {
      provider: protoSchema(this.def.schema),
      resource_schemas: Object.fromEntries([...this.resources].map(([n, r]) => [n, protoSchema(r.schema)])),
      data_source_schemas: Object.fromEntries([...this.dataSources].map(([n, d]) => [n, protoSchema(d.schema)])),
      server_capabilities: { plan_destroy: false, get_provider_schema_optional: false, move_resource_state: false },
      diagnostics: [],
    };
  }

  validateProviderConfig(req: ConfigRequest): Promise<WithDiagnostics> {
    return this.guard('validating the provider configuration', {}, () => ({
      diagnostics: protoDiagnostics(this.def.validateConfig(decode(objectType(this.def.schema.attributes), req.config))),
    }));
  }

  validateResourceConfig(req: ConfigRequest): Promise<WithDiagnostics> {
    return this.guard(`validating ${req.type_name ?? ''}`, {}, () => {
      const r = this.resource(req.type_name ?? '');
      return { diagnostics: protoDiagnostics(r.validate(decode(objectType(r.schema.attributes), req.config))) };
    });
  }

  validateDataResourceConfig(req: ConfigRequest): Promise<WithDiagnostics> {
    return this.guard(`validating data source ${req.type_name ?? ''}`, {}, () => {
      const d = this.dataSource(req.type_name ?? '');
      return { diagnostics: protoDiagnostics(d.validate(decode(objectType(d.schema.attributes), req.config))) };
    });
  }

  configureProvider(req: ConfigureRequest): Promise<WithDiagnostics> {
    return this.guard('configuring the provider', {}, () => {
      const { context, diagnostics } = this.def.configure(decode(objectType(this.def.schema.attributes), req.config), req.terraform_version);
      if (context !== undefined) this.context = context;
      return { diagnostics: protoDiagnostics(diagnostics) };
    });
  }

  upgradeResourceState(req: UpgradeResourceStateRequest): Promise<WithDiagnostics & { upgraded_state?: DynamicValue }> {
    return this.guard<WithDiagnostics & { upgraded_state?: DynamicValue }>(`upgrading the state of ${req.type_name}`, {}, () => {
      const r = this.resource(req.type_name);
      const type = objectType(r.schema.attributes);
      if (req.version > r.schema.version) {
        throw new Error(`the state was written by a newer provider (schema version ${req.version}, this provider knows ${r.schema.version}); upgrade the provider`);
      }
      const json = req.raw_state?.json;
      if (!json || json.length === 0) throw new Error('the stored state has no JSON form (flatmap state of a pre-0.12 provider)');
      const state = conform(type, JSON.parse(Buffer.from(json).toString('utf8')) as Value);
      return { upgraded_state: encode(type, state), diagnostics: [] };
    });
  }

  readResource(req: ReadResourceRequest): Promise<WithDiagnostics & { new_state?: DynamicValue; private?: Uint8Array }> {
    return this.guard<WithDiagnostics & { new_state?: DynamicValue; private?: Uint8Array }>(`refreshing ${req.type_name}`, { new_state: req.current_state }, async () => {
      const r = this.resource(req.type_name);
      const type = objectType(r.schema.attributes);
      const out = await r.read(this.configured(), decode(type, req.current_state));
      return { new_state: encode(type, out.state), private: req.private ?? Buffer.alloc(0), diagnostics: protoDiagnostics(out.diagnostics) };
    });
  }

  planResourceChange(req: PlanResourceChangeRequest): Promise<PlanResponse> {
    return this.guard<PlanResponse>(`planning ${req.type_name}`, {}, () => {
      const r = this.resource(req.type_name);
      const type = objectType(r.schema.attributes);
      const out = r.plan(decode(type, req.prior_state), decode(type, req.config));
      return {
        planned_state: encode(type, out.planned),
        requires_replace: out.requiresReplace.map(protoPath),
        planned_private: req.prior_private ?? Buffer.alloc(0),
        diagnostics: protoDiagnostics(out.diagnostics),
      };
    });
  }

  applyResourceChange(req: ApplyResourceChangeRequest): Promise<WithDiagnostics & { new_state?: DynamicValue; private?: Uint8Array }> {
    return this.guard<WithDiagnostics & { new_state?: DynamicValue; private?: Uint8Array }>(`applying ${req.type_name}`, { new_state: req.prior_state }, async () => {
      const r = this.resource(req.type_name);
      const type = objectType(r.schema.attributes);
      const out = await r.apply(this.configured(), decode(type, req.prior_state), decode(type, req.planned_state));
      return { new_state: encode(type, out.state), private: Buffer.alloc(0), diagnostics: protoDiagnostics(out.diagnostics) };
    });
  }

  importResourceState(req: ImportResourceStateRequest): Promise<WithDiagnostics & { imported_resources?: { type_name: string; state: DynamicValue }[] }> {
    return this.guard<WithDiagnostics & { imported_resources?: { type_name: string; state: DynamicValue }[] }>(`importing ${req.type_name}`, { imported_resources: [] }, async () => {
      const r = this.resource(req.type_name);
      const out = await r.importState(this.configured(), req.id);
      const imported = out.state === null ? [] : [{ type_name: req.type_name, state: encode(objectType(r.schema.attributes), out.state) }];
      return { imported_resources: imported, diagnostics: protoDiagnostics(out.diagnostics) };
    });
  }

  readDataSource(req: ConfigRequest): Promise<WithDiagnostics & { state?: DynamicValue }> {
    return this.guard<WithDiagnostics & { state?: DynamicValue }>(`reading data source ${req.type_name ?? ''}`, {}, async () => {
      const d = this.dataSource(req.type_name ?? '');
      const type = objectType(d.schema.attributes);
      const out = await d.read(this.configured(), decode(type, req.config));
      return { state: encode(type, out.state), diagnostics: protoDiagnostics(out.diagnostics) };
    });
  }

  stopProvider(): { Error: string } {
    this.def.stop();
    return { Error: '' };
  }
}
