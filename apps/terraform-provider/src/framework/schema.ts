import type { CtyPrimitive, CtyType } from '../cty/value';

/**
 * Schemas as data: the attributes of a resource, a data source or the provider, from which come
 * both what Terraform is told (GetProviderSchema) and the cty type every value is encoded with.
 * Nested objects are protocol-6 nested attributes (`spec = { ... }`), each with its own flags.
 *
 * `wire` describes how an attribute crosses to the REST API; it never reaches Terraform.
 */
export interface WireMapping {
  /** The API's JSON key when it is not the attribute name in camelCase. */
  key?: string;
  /** `document`: a JSON string in Terraform, a JSON object in the API. `text`: a JSON string on both sides. */
  json?: 'document' | 'text';
  /** The API's value for "not set" (`""`, `[]`, `{}`, `false`): read back as null when Terraform had null. */
  unsetWhen?: unknown;
}

interface AttributeFlags {
  description: string;
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  wire?: WireMapping;
}

export interface PrimitiveAttribute extends AttributeFlags {
  kind: CtyPrimitive;
}
export interface CollectionAttribute extends AttributeFlags {
  kind: 'list' | 'set' | 'map';
  element: CtyPrimitive;
}
export interface NestedAttribute extends AttributeFlags {
  kind: 'nested';
  nesting: 'single' | 'list' | 'set' | 'map';
  attributes: Attributes;
}
export type Attribute = PrimitiveAttribute | CollectionAttribute | NestedAttribute;
export type Attributes = { readonly [name: string]: Attribute };

export interface Schema {
  version: number;
  description: string;
  attributes: Attributes;
}

type Flags = Omit<AttributeFlags, 'description'>;

export const string = (description: string, flags: Flags = {}): PrimitiveAttribute => ({ kind: 'string', description, ...flags });
export const number = (description: string, flags: Flags = {}): PrimitiveAttribute => ({ kind: 'number', description, ...flags });
export const bool = (description: string, flags: Flags = {}): PrimitiveAttribute => ({ kind: 'bool', description, ...flags });
export const list = (element: CtyPrimitive, description: string, flags: Flags = {}): CollectionAttribute => ({ kind: 'list', element, description, ...flags });
export const set = (element: CtyPrimitive, description: string, flags: Flags = {}): CollectionAttribute => ({ kind: 'set', element, description, ...flags });
export const map = (element: CtyPrimitive, description: string, flags: Flags = {}): CollectionAttribute => ({ kind: 'map', element, description, ...flags });
export const object = (attributes: Attributes, description: string, flags: Flags = {}): NestedAttribute => ({
  kind: 'nested',
  nesting: 'single',
  attributes,
  description,
  ...flags,
});
export const listOf = (attributes: Attributes, description: string, flags: Flags = {}): NestedAttribute => ({
  kind: 'nested',
  nesting: 'list',
  attributes,
  description,
  ...flags,
});

/** The cty object type of a set of attributes (what a whole resource value, or a nested object, is). */
export function objectType(attributes: Attributes): CtyType {
  return ['object', Object.fromEntries(Object.entries(attributes).map(([name, a]) => [name, attributeType(a)]))];
}

export function attributeType(a: Attribute): CtyType {
  switch (a.kind) {
    case 'string':
    case 'number':
    case 'bool':
      return a.kind;
    case 'list':
    case 'set':
    case 'map':
      return [a.kind, a.element];
    case 'nested': {
      const inner = objectType(a.attributes);
      return a.nesting === 'single' ? inner : [a.nesting, inner];
    }
  }
}

/** The same attributes, every one computed and none settable: a data source's view of a resource. */
export function allComputed(attributes: Attributes): Attributes {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, a]) => {
      const flags = { description: a.description, computed: true, ...(a.sensitive ? { sensitive: true } : {}), ...(a.wire ? { wire: a.wire } : {}) };
      const out: Attribute = a.kind === 'nested' ? { ...a, ...flags, required: false, optional: false, attributes: allComputed(a.attributes) } : { ...a, ...flags, required: false, optional: false };
      return [name, out];
    }),
  );
}
