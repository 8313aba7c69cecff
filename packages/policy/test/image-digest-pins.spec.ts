import { resolveSandboxSpec, validatePolicy } from '../src/index';

const PIN = `sha256:${'a'.repeat(64)}`;
const OTHER = `sha256:${'b'.repeat(64)}`;

function resolveWith(allowedImages: string[], image: string): ReturnType<typeof resolveSandboxSpec> {
  const v = validatePolicy({ constraints: { image: { allowedImages } } });
  if (!v.ok) throw new Error(JSON.stringify(v));
  return resolveSandboxSpec({ policy: v.policy, spec: { containers: [{ image }] } });
}

describe('constraints.image.allowedImages digest pins', () => {
  it('admits a tag of a pinned repository on condition: the resolved container carries the pins', () => {
    const r = resolveWith([`ghcr.io/acme/app@${PIN}`, `ghcr.io/acme/app@${OTHER}`, `ghcr.io/acme/tool@${OTHER}`], 'ghcr.io/acme/app:1.2');
    if (!r.ok) throw new Error(JSON.stringify(r.violations));
    expect(r.resolved.containers[0]?.imageDigests).toEqual([PIN, OTHER]);
  });

  it('pins Docker Hub short names through their qualified form', () => {
    const r = resolveWith([`docker.io/library/python@${PIN}`], 'python:3.12');
    if (!r.ok) throw new Error(JSON.stringify(r.violations));
    expect(r.resolved.containers[0]?.imageDigests).toEqual([PIN]);
  });

  it('admits the pinned digest itself, and a repository listed without a version, with no condition', () => {
    const byDigest = resolveWith([`ghcr.io/acme/app@${PIN}`], `ghcr.io/acme/app@${PIN}`);
    if (!byDigest.ok) throw new Error(JSON.stringify(byDigest.violations));
    expect(byDigest.resolved.containers[0]?.imageDigests).toBeUndefined();
    const anyTag = resolveWith(['ghcr.io/acme/app', `ghcr.io/acme/app@${PIN}`], 'ghcr.io/acme/app:1.2');
    if (!anyTag.ok) throw new Error(JSON.stringify(anyTag.violations));
    expect(anyTag.resolved.containers[0]?.imageDigests).toBeUndefined();
  });

  it('refuses, naming the rule, another digest of the pinned repository and any unpinned repository', () => {
    for (const image of [`ghcr.io/acme/app@${OTHER}`, 'ghcr.io/acme/other:1', 'ghcr.io/acme/app-evil:1']) {
      const r = resolveWith([`ghcr.io/acme/app@${PIN}`], image);
      expect(r.ok ? [] : r.violations.map((v) => [v.field, v.rule])).toEqual([['containers[0].image', 'allowed_images']]);
    }
  });
});
