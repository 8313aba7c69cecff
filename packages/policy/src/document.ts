/**
 * Hardened YAML/JSON document parsing for the CLI and any plane that accepts a user's file.
 *
 * This is the ONLY module that imports `yaml`; it is published as the separate entry
 * `@paddock/policy/document` so the pure engine (`@paddock/policy`) never loads a parser. Hostile
 * inputs are refused quickly and as named violations, never as exceptions:
 * - size above 1 MiB (checked before parsing, so a 10 MiB string costs nothing);
 * - nesting deeper than 64 (pre-scanned before parsing, so 10,000-deep input never reaches the
 *   parser's recursion);
 * - YAML anchors and aliases (billion-laughs expansion);
 * - duplicate keys;
 * - numbers that are not finite or not safely representable (`1e309`, `.inf`, 2^64).
 * JSON is parsed by the same YAML 1.2 parser (JSON is YAML), so both spellings give identical
 * results; snake_case keys are then converted to camelCase (user map keys untouched).
 */
import { isAlias, isNode, parseDocument, visit, type Document } from 'yaml';
import type { FieldViolation } from '@paddock/contracts';
import { snakeToCamelDeep } from '@paddock/contracts';
import { isObj } from './network';
import { utf8Length } from './validate-policy';

export const DOCUMENT_MAX_BYTES = 1024 * 1024;
export const DOCUMENT_MAX_DEPTH = 64;

export type ParseDocumentResult =
  { ok: true; value: unknown } | { ok: false; violations: FieldViolation[] };

const fail = (
  rule: string,
  description: string,
  extra: Partial<FieldViolation> = {},
): ParseDocumentResult => ({
  ok: false,
  violations: [{ field: 'document', rule, description: `document: ${description}`, ...extra }],
});

/**
 * Upper bound of the nesting depth of a YAML/JSON text without parsing it: flow brackets
 * outside quoted strings, plus block nesting estimated from indentation and `- ` sequence
 * markers. Over-estimates are fine (the bound only needs to refuse hostile input).
 */
export function estimateNestingDepth(text: string, stopAt: number): number {
  let flow = 0;
  let maxFlow = 0;
  let quote: '"' | "'" | null = null;
  let lineStart = true;
  let indent = 0;
  let dashes = 0;
  let maxBlock = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (quote) {
      if (quote === '"' && ch === 92 /* \ */) i++;
      else if (ch === quote.charCodeAt(0)) quote = null;
      else if (ch === 10) lineStart = true;
      continue;
    }
    if (ch === 10) {
      lineStart = true;
      indent = 0;
      dashes = 0;
      continue;
    }
    if (lineStart) {
      if (ch === 32) {
        indent++;
        continue;
      }
      if (ch === 45 /* - */ && text.charCodeAt(i + 1) === 32) {
        dashes++;
        indent += 2;
        i++;
        continue;
      }
      lineStart = false;
      // Each level of block nesting needs at least one column of indentation or one `- `.
      const block = indent + dashes;
      if (block > maxBlock) maxBlock = block;
    }
    if (ch === 35 /* # */) {
      while (i < text.length && text.charCodeAt(i) !== 10) i++;
      i--;
      continue;
    }
    if (ch === 34 || ch === 39) quote = ch === 34 ? '"' : "'";
    else if (ch === 91 || ch === 123) {
      flow++;
      if (flow > maxFlow) maxFlow = flow;
      if (maxFlow > stopAt) return maxFlow;
    } else if (ch === 93 || ch === 125) flow = Math.max(0, flow - 1);
  }
  // Block indentation is counted in columns, so it only refuses when absurd (> stopAt * 8).
  return Math.max(maxFlow, Math.floor(maxBlock / 8));
}

/** Walks a parsed value iteratively: depth, finite/safe numbers. */
function checkValue(root: unknown): ParseDocumentResult | null {
  const stack: { v: unknown; d: number }[] = [{ v: root, d: 0 }];
  while (stack.length) {
    const { v, d } = stack.pop() as { v: unknown; d: number };
    if (d > DOCUMENT_MAX_DEPTH) {
      return fail('max_depth', `nesting exceeds ${DOCUMENT_MAX_DEPTH} levels`, {
        limit: DOCUMENT_MAX_DEPTH,
      });
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v))) {
        return fail('number_out_of_range', `number ${String(v)} is out of range`);
      }
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push({ v: x, d: d + 1 });
    } else if (isObj(v)) {
      // Only plain JSON data: YAML tags such as !!binary, !!set or !!omap build other objects.
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        return fail(
          'type',
          'only plain JSON data is accepted (no YAML tags such as !!binary or !!set)',
        );
      }
      for (const k in v) stack.push({ v: v[k], d: d + 1 });
    }
  }
  return null;
}

function firstAliasOrAnchor(doc: Document): string | null {
  let found: string | null = null;
  visit(doc, (_key, node) => {
    if (isAlias(node)) {
      found = `YAML aliases are not accepted (alias *${node.source})`;
      return visit.BREAK;
    }
    if (isNode(node) && node.anchor) {
      found = `YAML anchors are not accepted (anchor &${node.anchor})`;
      return visit.BREAK;
    }
    return undefined;
  });
  return found;
}

/** Parses a YAML or JSON policy (or spec, or capabilities) document; snake_case keys become camelCase. */
export function parsePolicyDocument(text: string): ParseDocumentResult {
  if (typeof text !== 'string') return fail('type', 'expected text');
  if (text.length > DOCUMENT_MAX_BYTES || utf8Length(text) > DOCUMENT_MAX_BYTES) {
    return fail('max_size', `input exceeds ${DOCUMENT_MAX_BYTES} bytes (1 MiB)`, {
      limit: DOCUMENT_MAX_BYTES,
    });
  }
  if (estimateNestingDepth(text, DOCUMENT_MAX_DEPTH) > DOCUMENT_MAX_DEPTH) {
    return fail('max_depth', `nesting exceeds ${DOCUMENT_MAX_DEPTH} levels`, {
      limit: DOCUMENT_MAX_DEPTH,
    });
  }
  let doc: Document;
  try {
    doc = parseDocument(text, {
      uniqueKeys: true,
      prettyErrors: true,
      merge: false,
      strict: true,
      version: '1.2',
    });
  } catch (e) {
    return fail('parse_error', e instanceof Error ? e.message : String(e));
  }
  if (doc.errors.length) {
    const e = doc.errors[0];
    const dup = e?.code === 'DUPLICATE_KEY';
    const pos = e?.linePos?.[0];
    return fail(
      dup ? 'duplicate_key' : 'parse_error',
      `${pos ? `line ${pos.line} column ${pos.col}: ` : ''}${e?.message.split('\n')[0] ?? 'invalid YAML/JSON'}`,
    );
  }
  const aliasProblem = firstAliasOrAnchor(doc);
  if (aliasProblem) return fail('alias_refused', aliasProblem);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 0 });
  } catch (e) {
    return fail('parse_error', e instanceof Error ? e.message : String(e));
  }
  const bad = checkValue(value);
  if (bad) return bad;
  return { ok: true, value: snakeToCamelDeep(value) };
}
