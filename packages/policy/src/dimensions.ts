import type { ValueSource } from '@paddock/contracts';
import type { CompiledPolicy, DimensionBounds } from './compile';
import * as m_defaults from './defaults';
import * as m_quantity from './quantity';
import type { PolicyRule } from './violations';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { PLATFORM_DEFAULTS } = m_defaults;
const { formatCpu, formatMemory, parseCpuMillis, parseMemoryBytes } = m_quantity;

/**
 * cpu and memory are read, defaulted and bounded by the same rules; a `Dimension` is everything
 * that differs between them, so each rule is written once for both.
 */
export interface Dimension {
  readonly key: 'cpu' | 'memory';
  readonly parse: (text: string) => number | null;
  readonly format: (n: number) => string;
  /** Examples of valid quantities, for messages. */
  readonly examples: string;
  readonly platformDefault: number;
  /** Said after the sandbox's total in ceiling messages (what the total includes). */
  readonly totalNote: string;
  /** The runner capability naming the largest sandbox it hosts in this dimension. */
  readonly capsKey: 'maxCpu' | 'maxMemory';
  readonly rules: {
    readonly max: PolicyRule;
    readonly min: PolicyRule;
    readonly ceiling: PolicyRule;
  };
  readonly constraints: { readonly max: string; readonly min: string; readonly ceiling: string };
}

export const CPU: Dimension = {
  key: 'cpu',
  parse: parseCpuMillis,
  format: formatCpu,
  examples: '"500m", "2"',
  platformDefault: PLATFORM_DEFAULTS.cpuMillis,
  totalNote: '',
  capsKey: 'maxCpu',
  rules: { max: 'max_cpu', min: 'min_cpu', ceiling: 'cpu_ceiling' },
  constraints: {
    max: 'constraints.resources.maxCpu',
    min: 'constraints.resources.minCpu',
    ceiling: 'constraints.resources.cpuCeiling',
  },
};

export const MEMORY: Dimension = {
  key: 'memory',
  parse: parseMemoryBytes,
  format: formatMemory,
  examples: '"512Mi", "4Gi"',
  platformDefault: PLATFORM_DEFAULTS.memoryBytes,
  totalNote: ' (including MEMORY volumes)',
  capsKey: 'maxMemory',
  rules: { max: 'max_memory', min: 'min_memory', ceiling: 'memory_ceiling' },
  constraints: {
    max: 'constraints.resources.maxMemory',
    min: 'constraints.resources.minMemory',
    ceiling: 'constraints.resources.memoryCeiling',
  },
};

/** One place a quantity was given (or defaulted), for messages that point at what the user wrote. */
export interface Amount {
  path: string;
  value: number;
  raw: string;
  /** A request (min bound applies) and/or a limit. */
  isRequest: boolean;
  source: ValueSource;
}

/** What a container says about one dimension, before defaults. */
export interface DimensionRead {
  /** Every quantity written for this dimension (requests and limits), in the order read. */
  amounts: Amount[];
  request?: number;
  limit?: number;
  /** A limit was declared (by `resources`, or `resourceRequirements.limits`). */
  limitDeclared: boolean;
}

/** The compiled policy's bounds for one dimension. */
export function boundsOf(p: CompiledPolicy, d: Dimension): DimensionBounds {
  return d.key === 'cpu' ? p.bounds.cpu : p.bounds.memory;
}
