/**
 * The `runner.yaml` from the product's install documentation, verbatim, with `[CLUSTER-NAME]` filled in when a name is given
 * (as `cwic sandbox runner create ... -f runner.yaml` reads it). One copy for every suite that
 * runs the seed's commands.
 */
export function seedRunnerYaml(clusterName = '[CLUSTER-NAME]'): string {
  return `identity:
  zone: us-east-1
  cluster_name: ${clusterName}
spec:
  release_channel: RELEASE_CHANNEL_STABLE
  maintenance_policy:
    windows:
      - cron: "0 9 * * SAT"
        duration_seconds: 14400
policy:
  display_name: default
  constraints:
    resources:
      default_cpu: "1"
      default_memory: "2Gi"
      max_cpu: "4"
      max_memory: "8Gi"
      require_limits: true
    lifecycle:
      default_lifetime_seconds: 3600
`;
}
