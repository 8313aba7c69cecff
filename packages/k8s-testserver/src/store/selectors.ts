import { badRequest } from './errors';
import { isRecord, type KubeObject } from '../types';

/** One requirement of a label selector (`a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`). */
type LabelRequirement =
  | { key: string; op: 'in'; values: string[] }
  | { key: string; op: 'notin'; values: string[] }
  | { key: string; op: 'exists' }
  | { key: string; op: 'doesnotexist' };

export type LabelSelector = LabelRequirement[];

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) parts.push(cur);
  return parts.map((p) => p.trim()).filter(Boolean);
}

export function parseLabelSelector(s: string | null | undefined): LabelSelector {
  if (!s) return [];
  return splitTopLevel(s).map((part): LabelRequirement => {
    let m = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (m) {
      const values = (m[3] ?? '').split(',').map((v) => v.trim()).filter(Boolean);
      return m[2] === 'in' ? { key: m[1] ?? '', op: 'in', values } : { key: m[1] ?? '', op: 'notin', values };
    }
    m = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s]*)$/.exec(part);
    if (m) {
      const values = [m[3] ?? ''];
      return m[2] === '!=' ? { key: m[1] ?? '', op: 'notin', values } : { key: m[1] ?? '', op: 'in', values };
    }
    m = /^!\s*([^\s!=]+)$/.exec(part);
    if (m) return { key: m[1] ?? '', op: 'doesnotexist' };
    if (/^[^\s!=(),]+$/.test(part)) return { key: part, op: 'exists' };
    throw badRequest(`unable to parse requirement: found '${part}', expected: in, notin, =, ==, !=, gt, lt`);
  });
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return selector.every((req) => {
    const has = Object.prototype.hasOwnProperty.call(l, req.key);
    switch (req.op) {
      case 'in':
        return has && req.values.includes(l[req.key] ?? '');
      case 'notin':
        return !has || !req.values.includes(l[req.key] ?? '');
      case 'exists':
        return has;
      case 'doesnotexist':
        return !has;
    }
  });
}

/** `metav1.LabelSelector` (matchLabels + matchExpressions), as Deployments and ReplicaSets carry it. */
export function matchesLabelSelectorObject(selector: unknown, labels: Record<string, string> | undefined): boolean {
  if (!isRecord(selector)) return false;
  const l = labels ?? {};
  const matchLabels = isRecord(selector.matchLabels) ? selector.matchLabels : {};
  for (const [k, v] of Object.entries(matchLabels)) if (l[k] !== v) return false;
  const exprs = Array.isArray(selector.matchExpressions) ? (selector.matchExpressions as unknown[]) : [];
  for (const e of exprs) {
    if (!isRecord(e) || typeof e.key !== 'string') return false;
    const values = Array.isArray(e.values) ? (e.values as unknown[]).map(String) : [];
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const v = l[e.key] ?? '';
    const ok =
      e.operator === 'In' ? has && values.includes(v)
      : e.operator === 'NotIn' ? !has || !values.includes(v)
      : e.operator === 'Exists' ? has
      : e.operator === 'DoesNotExist' ? !has
      : false;
    if (!ok) return false;
  }
  return true;
}

type FieldRequirement = { path: string[]; value: string; equal: boolean };
export type FieldSelector = FieldRequirement[];

export function parseFieldSelector(s: string | null | undefined): FieldSelector {
  if (!s) return [];
  return s.split(',').map((part) => {
    const m = /^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${s}'; can't understand '${part}'`);
    return { path: (m[1] ?? '').split('.'), value: m[3] ?? '', equal: m[2] !== '!=' };
  });
}

/** Field selectors match on the string form of a field; absent fields compare as "". */
export function matchesFields(selector: FieldSelector, obj: KubeObject): boolean {
  return selector.every((req) => {
    let cur: unknown = obj;
    for (const step of req.path) cur = isRecord(cur) ? cur[step] : undefined;
    const actual = cur === undefined || cur === null ? '' : typeof cur === 'string' ? cur : JSON.stringify(cur);
    return (actual === req.value) === req.equal;
  });
}
