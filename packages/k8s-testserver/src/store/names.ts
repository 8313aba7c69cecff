import { randomInt } from 'node:crypto';

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5-character suffix the API server appends to `generateName`. */
export const randomSuffix = (n = 5): string => Array.from({ length: n }, () => SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)]).join('');

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The API server's name validation messages (apimachinery validation.IsDNS1123Subdomain / Label). */
export function nameProblems(name: string, label: boolean): string[] {
  if (label) {
    const out: string[] = [];
    if (name.length > 63) out.push('must be no more than 63 characters');
    if (!DNS1123_LABEL.test(name)) {
      out.push(`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`);
    }
    return out;
  }
  const out: string[] = [];
  if (name.length > 253) out.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(name)) {
    out.push(`a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`);
  }
  return out;
}
