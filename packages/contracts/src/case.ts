/**
 * Key-case conversion between the snake_case YAML spelling of the CLI and seeds
 * (`release_channel`, `default_cpu`, `max_gpu_count`, `cluster_name`, `maintenance_policy`,
 * `duration_seconds`...) and the camelCase JSON of the API.
 *
 * Keys of user-chosen maps are NEVER converted: an environment variable named `MY_VAR`, a label
 * `app_tier` or an annotation `example.com/some_key` must arrive exactly as written. The values
 * under the keys below are copied verbatim, at every depth.
 */
const OPAQUE_MAP_KEYS_CAMEL = [
  // Sandbox spec: container env, pod annotations.
  'environmentVariables',
  'env',
  'annotations',
  'labels',
  // Runner spec.overrides / deploymentSpec: Kubernetes maps.
  'nodeSelector',
  'serviceAnnotations',
  // Network selectors: Kubernetes label maps.
  'podLabels',
  'namespaceLabels',
  // Policy base: a Kubernetes pod-spec fragment, already in Kubernetes' own camelCase.
  'base',
  // Free-form pass-through objects of the sandbox spec and runner status.
  'deploymentSpec',
  'dataPlaneStatus',
] as const;

const snakeToCamelKey = (k: string): string =>
  k.includes('_')
    ? k.replace(/(?<=[A-Za-z0-9])_+([a-z0-9])/g, (_m, c: string) => c.toUpperCase())
    : k;
const camelToSnakeKey = (k: string): string =>
  /[A-Z]/.test(k) ? k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : k;

const OPAQUE_CAMEL = new Set<string>(OPAQUE_MAP_KEYS_CAMEL);
const OPAQUE_SNAKE = new Set<string>(OPAQUE_MAP_KEYS_CAMEL.map(camelToSnakeKey));
/** Either spelling of an opaque key marks its value as opaque. */
const isOpaque = (k: string): boolean => OPAQUE_CAMEL.has(k) || OPAQUE_SNAKE.has(k);

/** Exported for documentation and tests: the map keys whose contents are never case-converted. */
export const CASE_OPAQUE_MAP_KEYS: readonly string[] = OPAQUE_MAP_KEYS_CAMEL;

function convert(value: unknown, mapKey: (k: string) => string, depth: number): unknown {
  // Depth guard: the converter is recursive; hostile documents are capped by the parsers first,
  // this keeps a direct caller from blowing the stack.
  if (depth > 256) return value;
  if (Array.isArray(value)) return value.map((v) => convert(v, mapKey, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const key = mapKey(k);
    const converted = isOpaque(k) || isOpaque(key) ? v : convert(v, mapKey, depth + 1);
    // A JSON key `__proto__` is an own property; plain assignment would set the prototype instead.
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value: converted,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else out[key] = converted;
  }
  return out;
}

/** `{max_gpu_count: 2, env: {MY_VAR: '1'}}` → `{maxGpuCount: 2, env: {MY_VAR: '1'}}`. */
export function snakeToCamelDeep(value: unknown): unknown {
  return convert(value, snakeToCamelKey, 0);
}

/** `{maxGpuCount: 2}` → `{max_gpu_count: 2}`; user map keys kept verbatim. */
export function camelToSnakeDeep(value: unknown): unknown {
  return convert(value, camelToSnakeKey, 0);
}
