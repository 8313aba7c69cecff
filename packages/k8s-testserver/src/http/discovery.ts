import { apiGroups, discoveryResources } from '../store/resources';

/** Bodies of the discovery endpoints client-node's KubernetesObjectApi resolves resource names from. */
export function discovery(path: string, serverAddress: string): unknown {
  if (path === '/api') {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }
  if (path === '/api/v1') return { kind: 'APIResourceList', groupVersion: 'v1', resources: discoveryResources('', 'v1') };
  const groupEntry = (g: { name: string; versions: string[] }): Record<string, unknown> => {
    const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v }));
    return { name: g.name, versions, preferredVersion: versions[0] };
  };
  if (path === '/apis') return { kind: 'APIGroupList', apiVersion: 'v1', groups: apiGroups().map(groupEntry) };
  const parts = path.split('/').filter(Boolean);
  if (path === '/version') {
    return { major: '1', minor: '31', gitVersion: 'v1.31.0-paddock-testserver', gitCommit: '', gitTreeState: 'clean', buildDate: '2026-01-01T00:00:00Z', goVersion: 'n/a', compiler: 'n/a', platform: `${process.platform}/${process.arch}` };
  }
  if (parts[0] === 'apis' && parts.length === 2) {
    const g = apiGroups().find((x) => x.name === parts[1]);
    return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(g) } : undefined;
  }
  if (parts[0] === 'apis' && parts.length === 3) {
    const resources = discoveryResources(parts[1] ?? '', parts[2] ?? '');
    return resources.length ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${parts[1] ?? ''}/${parts[2] ?? ''}`, resources } : undefined;
  }
  return undefined;
}
