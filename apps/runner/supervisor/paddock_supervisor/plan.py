"""The runner's plan for one sandbox, checked against the JSON Schema the runner emits from its own
schema of the plan (written beside these modules as plan.schema.json when the runner installs the
supervisor). A small validator of the subset that schema uses; a keyword outside the subset is an
error, never skipped, so a richer schema cannot pass unchecked."""
import json, os

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'plan.schema.json')

# Keywords with no constraint to check here: annotations, and propertyNames, which only says keys
# are strings (JSON object keys always are).
IGNORED = {'$schema', 'description', 'title', 'propertyNames'}
KNOWN = IGNORED | {'type', 'properties', 'required', 'additionalProperties', 'items', 'minItems',
                   'minLength', 'minimum', 'maximum', 'exclusiveMinimum'}


class PlanError(ValueError):
  pass


def load_schema(path=SCHEMA_FILE):
  with open(path) as f: return json.load(f)


def type_ok(kind, value):
  if kind == 'object': return isinstance(value, dict)
  if kind == 'array': return isinstance(value, list)
  if kind == 'string': return isinstance(value, str)
  if kind == 'boolean': return isinstance(value, bool)
  if kind == 'integer': return isinstance(value, int) and not isinstance(value, bool)
  if kind == 'number': return isinstance(value, (int, float)) and not isinstance(value, bool)
  raise PlanError('schema: unsupported type %r' % kind)


def errors(schema, value, where='plan'):
  """Every violation of `schema` by `value`, each naming the field (plan.a.b[2]) and the rule."""
  unknown = sorted(set(schema) - KNOWN)
  if unknown: raise PlanError('schema: unsupported keyword(s) %s at %s' % (', '.join(unknown), where))
  out = []
  kind = schema.get('type')
  if kind is not None and not type_ok(kind, value):
    return ['%s: must be of type %s' % (where, kind)]
  if isinstance(value, str) and len(value) < schema.get('minLength', 0):
    out.append('%s: must be at least %d characters' % (where, schema['minLength']))
  if isinstance(value, (int, float)) and not isinstance(value, bool):
    if 'minimum' in schema and value < schema['minimum']: out.append('%s: must be >= %s' % (where, schema['minimum']))
    if 'maximum' in schema and value > schema['maximum']: out.append('%s: must be <= %s' % (where, schema['maximum']))
    if 'exclusiveMinimum' in schema and value <= schema['exclusiveMinimum']:
      out.append('%s: must be > %s' % (where, schema['exclusiveMinimum']))
  if isinstance(value, list):
    if len(value) < schema.get('minItems', 0): out.append('%s: must have at least %d items' % (where, schema['minItems']))
    if 'items' in schema:
      for i, item in enumerate(value): out.extend(errors(schema['items'], item, '%s[%d]' % (where, i)))
  if isinstance(value, dict):
    props = schema.get('properties', {})
    for key in schema.get('required', []):
      if key not in value: out.append('%s.%s: required' % (where, key))
    extra = schema.get('additionalProperties', True)
    for key, item in value.items():
      if key in props: out.extend(errors(props[key], item, '%s.%s' % (where, key)))
      elif extra is False: out.append('%s.%s: not a field of the plan' % (where, key))
      elif isinstance(extra, dict): out.extend(errors(extra, item, '%s.%s' % (where, key)))
  return out


def check(plan, schema):
  """Raises PlanError listing every violation; returns the plan when it conforms."""
  found = errors(schema, plan)
  if found: raise PlanError('the plan does not match its schema: ' + '; '.join(found))
  return plan
