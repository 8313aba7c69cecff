/**
 * Golden fixtures (STYLE B.10): `fixtures/*.json`, each an input (policy, spec, capabilities, or a
 * legacy template) plus the expected decision. The policy package runs them all, and every app
 * runs the same files through its own adapter path (`policy.contract.unit.spec.ts`), which is
 * what proves the engine decides identically everywhere.
 *
 * This module reads files (node:fs), so it is exported only from `@paddock/policy/testing`,
 * never from the pure core.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FieldViolation, RunnerCapabilities } from '@paddock/contracts';
import { FULL_CAPABILITIES } from '@paddock/contracts';
import { checkProfileTemplate } from './legacy-template';
import { resolveSandboxSpec } from './resolve';
import { validatePolicy } from './validate-policy';
import { explainPlacement } from './explain';
import { snakeToCamelDeep } from '@paddock/contracts';

export type FixtureKind = 'validate' | 'resolve' | 'template' | 'explain';

/** An expected violation: field and rule always; constraint/requested/limit/description when given. */
export interface ExpectedViolation {
  field: string;
  rule: string;
  constraint?: string;
  requested?: unknown;
  limit?: unknown;
  description?: string;
}

export interface GoldenFixture {
  file: string;
  name: string;
  description: string;
  /** The rules this fixture exercises (for coverage listings). */
  covers: string[];
  kind: FixtureKind;
  /** The input is written in snake_case YAML spelling and must be converted first. */
  snakeCase?: boolean;
  policy?: unknown;
  spec?: unknown;
  /** Partial capabilities, merged over FULL_CAPABILITIES. */
  capabilities?: Partial<RunnerCapabilities>;
  runners?: { runnerId: string; policy: unknown; capabilities?: Partial<RunnerCapabilities> }[];
  template?: unknown;
  templateOptions?: {
    bindingIndex: number;
    templateId: string;
    allowPrivilegedProfileAnnotations: boolean;
  };
  expect: {
    ok: boolean;
    /** Exact set (by field + rule) of violations on rejection. */
    violations?: ExpectedViolation[];
    /** Deep subset the resolved spec (or validated policy) must contain. */
    resolved?: unknown;
    policy?: unknown;
    /** Legacy template: exact message and fields. */
    message?: string;
    privilegedFields?: string[];
    /** Explain: admitted flag per runner id. */
    admitted?: Record<string, boolean>;
  };
}

export const FIXTURES_DIR = join(__dirname, '..', 'fixtures');

/** Loads every `*.json` fixture of a directory (default: the package's own), sorted by file name. */
export function loadGoldenFixtures(dir: string = FIXTURES_DIR): GoldenFixture[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({
      file,
      ...(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Omit<GoldenFixture, 'file'>),
    }));
}

export const capabilitiesOf = (c: Partial<RunnerCapabilities> | undefined): RunnerCapabilities => ({
  ...FULL_CAPABILITIES,
  ...(c ?? {}),
});

/** The decision a fixture compares against, produced by some engine path. */
export interface FixtureDecision {
  ok: boolean;
  violations: FieldViolation[];
  resolved?: unknown;
  policy?: unknown;
  message?: string;
  privilegedFields?: string[];
  admitted?: Record<string, boolean>;
}

const input = (f: GoldenFixture, v: unknown): unknown => (f.snakeCase ? snakeToCamelDeep(v) : v);

/** Runs a fixture through this package's engine. Apps provide their own equivalent adapter. */
export function decideFixture(f: GoldenFixture): FixtureDecision {
  switch (f.kind) {
    case 'validate': {
      const r = validatePolicy(input(f, f.policy));
      return r.ok
        ? { ok: true, violations: [], policy: r.policy }
        : { ok: false, violations: r.violations };
    }
    case 'resolve': {
      let policy = null;
      if (f.policy !== null && f.policy !== undefined) {
        const v = validatePolicy(input(f, f.policy));
        if (!v.ok) {
          return {
            ok: false,
            violations: v.violations.map((x) => ({ ...x, field: `policy.${x.field}` })),
          };
        }
        policy = v.policy;
      }
      const r = resolveSandboxSpec({
        policy,
        spec: input(f, f.spec),
        capabilities: capabilitiesOf(f.capabilities),
      });
      return r.ok
        ? { ok: true, violations: [], resolved: r.resolved }
        : { ok: false, violations: r.violations };
    }
    case 'template': {
      const r = checkProfileTemplate(
        f.template,
        f.templateOptions ?? {
          bindingIndex: 0,
          templateId: 'template',
          allowPrivilegedProfileAnnotations: false,
        },
      );
      return r.ok
        ? { ok: true, violations: [] }
        : { ok: false, violations: [], message: r.message, privilegedFields: r.privilegedFields };
    }
    case 'explain': {
      const runners = (f.runners ?? []).map((r) => {
        const v = r.policy === null ? null : validatePolicy(input(f, r.policy));
        if (v && !v.ok) {
          throw new Error(`fixture ${f.name}: runner ${r.runnerId} policy is invalid`);
        }
        return {
          runnerId: r.runnerId,
          policy: v ? (v.ok ? v.policy : null) : null,
          capabilities: capabilitiesOf(r.capabilities),
        };
      });
      const verdicts = explainPlacement(input(f, f.spec), runners);
      const admitted: Record<string, boolean> = {};
      for (const v of verdicts) admitted[v.runnerId] = v.admitted;
      return {
        ok: verdicts.some((v) => v.admitted),
        violations: verdicts.flatMap((v) =>
          v.violations.map((x) => ({ ...x, field: `${v.runnerId}:${x.field}` })),
        ),
        admitted,
      };
    }
  }
}

/** Whether `actual` contains `expected` (objects: every expected key; arrays: index-wise). */
export function containsSubset(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return Object.is(actual, expected);
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length < expected.length) return false;
    return expected.every((e, i) => containsSubset(actual[i], e));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const a = actual as Record<string, unknown>;
  return Object.entries(expected as Record<string, unknown>).every(([k, v]) =>
    containsSubset(a[k], v),
  );
}

/** Lists every difference between a fixture's expectation and a decision (empty = match). */
export function compareWithFixture(f: GoldenFixture, d: FixtureDecision): string[] {
  const problems: string[] = [];
  const e = f.expect;
  if (d.ok !== e.ok) {
    problems.push(
      `expected ok=${e.ok}, got ok=${d.ok}: ${d.violations.map((v) => v.description).join(' | ')}`,
    );
  }
  if (e.violations && f.kind !== 'explain') {
    const key = (v: { field: string; rule: string }): string => `${v.field} ${v.rule}`;
    const got = new Set(d.violations.map(key));
    const want = new Set(e.violations.map(key));
    for (const k of want) if (!got.has(k)) problems.push(`missing violation ${k}`);
    for (const k of got) {
      if (!want.has(k)) {
        problems.push(
          `unexpected violation ${k}: ${d.violations.find((v) => key(v) === k)?.description ?? ''}`,
        );
      }
    }
    for (const ev of e.violations) {
      const av = d.violations.find((v) => key(v) === key(ev));
      if (!av) continue;
      if (ev.constraint !== undefined && av.constraint !== ev.constraint) {
        problems.push(`${key(ev)}: constraint ${String(av.constraint)} != ${ev.constraint}`);
      }
      if (ev.requested !== undefined && !containsSubset(av.requested, ev.requested)) {
        problems.push(
          `${key(ev)}: requested ${JSON.stringify(av.requested)} != ${JSON.stringify(ev.requested)}`,
        );
      }
      if (ev.limit !== undefined && !containsSubset(av.limit, ev.limit)) {
        problems.push(
          `${key(ev)}: limit ${JSON.stringify(av.limit)} != ${JSON.stringify(ev.limit)}`,
        );
      }
      if (ev.description !== undefined && av.description !== ev.description) {
        problems.push(
          `${key(ev)}: description ${JSON.stringify(av.description)} != ${JSON.stringify(ev.description)}`,
        );
      }
    }
  }
  if (e.resolved !== undefined && !containsSubset(d.resolved, e.resolved)) {
    problems.push(
      `resolved spec does not contain ${JSON.stringify(e.resolved)}; got ${JSON.stringify(d.resolved)}`,
    );
  }
  if (e.policy !== undefined && !containsSubset(d.policy, e.policy)) {
    problems.push(`validated policy does not contain ${JSON.stringify(e.policy)}`);
  }
  if (e.message !== undefined && d.message !== e.message) {
    problems.push(`message ${JSON.stringify(d.message)} != ${JSON.stringify(e.message)}`);
  }
  if (
    e.privilegedFields !== undefined &&
    JSON.stringify(d.privilegedFields) !== JSON.stringify(e.privilegedFields)
  ) {
    problems.push(
      `privilegedFields ${JSON.stringify(d.privilegedFields)} != ${JSON.stringify(e.privilegedFields)}`,
    );
  }
  if (e.admitted !== undefined && JSON.stringify(d.admitted) !== JSON.stringify(e.admitted)) {
    problems.push(`admitted ${JSON.stringify(d.admitted)} != ${JSON.stringify(e.admitted)}`);
  }
  return problems;
}
