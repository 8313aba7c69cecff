import { isRecord, nowTimestamp, type KubeObject, type NodeSpecLite, type Taint } from './types';

/** A Ready node object as a real kubelet would register it. */
export function nodeObject(n: NodeSpecLite): KubeObject {
  const capacity = { cpu: n.capacity?.cpu ?? '8', memory: n.capacity?.memory ?? '32Gi', pods: n.capacity?.pods ?? '110', 'ephemeral-storage': '100Gi' };
  const now = nowTimestamp();
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: n.name,
      labels: { 'kubernetes.io/hostname': n.name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', ...n.labels },
    },
    spec: { ...(n.taints?.length ? { taints: n.taints } : {}), ...(n.unschedulable ? { unschedulable: true } : {}) },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now },
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available', lastHeartbeatTime: now, lastTransitionTime: now },
      ],
      addresses: [
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'Hostname', address: n.name },
      ],
      nodeInfo: { kubeletVersion: 'v1.31.0-paddock-testserver', containerRuntimeVersion: 'local-process://1', operatingSystem: 'linux', architecture: 'amd64', osImage: 'k8s-testserver', kernelVersion: '', kubeProxyVersion: '', machineID: '', systemUUID: '', bootID: '' },
    },
  };
}

export function withTaint(node: KubeObject, taint: Taint): KubeObject {
  const spec = isRecord(node.spec) ? node.spec : {};
  const taints = (Array.isArray(spec.taints) ? (spec.taints as Taint[]) : []).filter((t) => !(t.key === taint.key && t.effect === taint.effect));
  return { ...node, spec: { ...spec, taints: [...taints, taint] } };
}
