/**
 * The tfplugin6 messages this provider reads and writes, as `@grpc/proto-loader` presents them
 * (field names as in the .proto, enums as their names, int64 as numbers, bytes as Buffers).
 */
export interface DynamicValue {
  msgpack?: Uint8Array;
  json?: Uint8Array;
}

export interface AttributePathStep {
  attribute_name?: string;
  element_key_string?: string;
  element_key_int?: number;
}

export interface ProtoDiagnostic {
  severity: 'ERROR' | 'WARNING';
  summary: string;
  detail: string;
  attribute?: { steps: AttributePathStep[] };
}

export interface ProtoAttribute {
  name: string;
  type: Uint8Array;
  nested_type?: { attributes: ProtoAttribute[]; nesting: 'SINGLE' | 'LIST' | 'SET' | 'MAP' };
  description: string;
  description_kind: 'MARKDOWN';
  required: boolean;
  optional: boolean;
  computed: boolean;
  sensitive: boolean;
}

export interface ProtoSchema {
  version: number;
  block: { version: number; attributes: ProtoAttribute[]; block_types: never[]; description: string; description_kind: 'MARKDOWN' };
}

export interface WithDiagnostics {
  diagnostics: ProtoDiagnostic[];
}

export interface GetProviderSchemaResponse extends WithDiagnostics {
  provider: ProtoSchema;
  resource_schemas: Record<string, ProtoSchema>;
  data_source_schemas: Record<string, ProtoSchema>;
  server_capabilities: { plan_destroy: boolean; get_provider_schema_optional: boolean; move_resource_state: boolean };
}

export interface ConfigRequest {
  type_name?: string;
  config?: DynamicValue;
}

export interface ConfigureRequest {
  terraform_version: string;
  config?: DynamicValue;
}

export interface UpgradeResourceStateRequest {
  type_name: string;
  version: number;
  raw_state?: { json?: Uint8Array; flatmap?: Record<string, string> };
}

export interface ReadResourceRequest {
  type_name: string;
  current_state?: DynamicValue;
  private?: Uint8Array;
}

export interface PlanResourceChangeRequest {
  type_name: string;
  prior_state?: DynamicValue;
  proposed_new_state?: DynamicValue;
  config?: DynamicValue;
  prior_private?: Uint8Array;
}

export interface ApplyResourceChangeRequest {
  type_name: string;
  prior_state?: DynamicValue;
  planned_state?: DynamicValue;
  config?: DynamicValue;
  planned_private?: Uint8Array;
}

export interface ImportResourceStateRequest {
  type_name: string;
  id: string;
}
