import { allComputed, bool, list, listOf, map, number, object, set, string, type Attributes, type Schema } from '../framework/schema';

/**
 * `coreweave_sandbox_managed_runner`: one managed runner and its policy, through
 * `/v1/sandbox/managedRunners`. Attribute names follow the REST API's fields in snake_case.
 */
export const RESOURCE_TYPE = 'coreweave_sandbox_managed_runner';
export const RELEASE_CHANNEL_DEFAULT = 'RELEASE_CHANNEL_STABLE';
export const RUNNER_GROUP_DEFAULT = 'default';

const ports = listOf(
  {
    protocol: string('`TCP` (default), `UDP` or `SCTP`.', { optional: true }),
    port: number('First port, 1-65535.', { required: true }),
    end_port: number('Last port of a range (0 or unset: the single port `port`).', { optional: true }),
  },
  'Ports the rule covers; unset covers every port.',
  { optional: true },
);

const cidr = object(
  {
    cidr: string('A canonical IPv4 or IPv6 prefix, e.g. `10.0.0.0/8`.', { required: true }),
    except: set('string', 'Prefixes inside `cidr` that the rule leaves out.', { optional: true }),
  },
  'A network prefix peer.',
  { optional: true },
);

const tenant = string('A tenant peer: `TENANT_SCOPE_SAME_USER`, `TENANT_SCOPE_SAME_ORG` or `TENANT_SCOPE_SANDBOX_NETWORK`.', { optional: true });
const any = bool('Any peer (only `true` is meaningful).', { optional: true });

const egressRule = {
  cidr,
  https_hostname: string('An HTTPS hostname peer (`example.com`, `*.example.com`; `*` only in `allowed_egress`).', { optional: true }),
  dns_name: string('Legacy spelling of `https_hostname`; set one of the two.', { optional: true }),
  https_hostname_except: set('string', 'Hostnames carved out of an allowed hostname envelope (only in `allowed_egress`).', { optional: true }),
  dns_name_except: set('string', 'Legacy spelling of `https_hostname_except`.', { optional: true }),
  tenant,
  any,
  selector: object(
    {
      pod_labels: map('string', 'Labels the peer pods carry (at least one).', { required: true }),
      namespace_labels: map('string', 'Labels of the peer namespaces; unset means the sandbox\'s own namespace.', { optional: true }),
    },
    'A pod selector peer.',
    { optional: true },
  ),
  ports,
} satisfies Attributes;

const ingressRule = { cidr, tenant, any, ports } satisfies Attributes;

/** Every group of the runner policy document, snake_case. */
export const POLICY_ATTRIBUTES = {
  display_name: string('Human-readable name of the policy.', { optional: true }),
  base: string('Runtime defaults and attachments of every sandbox (on Kubernetes a pod-spec fragment), as JSON: write `jsonencode({...})`.', {
    optional: true,
    sensitive: true,
    wire: { json: 'document' },
  }),
  constraints: object(
    {
      resources: object(
        {
          max_cpu: string('Largest CPU request of one container (Kubernetes quantity).', { optional: true }),
          max_memory: string('Largest memory request of one container.', { optional: true }),
          min_cpu: string('Smallest CPU request of one container.', { optional: true }),
          min_memory: string('Smallest memory request of one container.', { optional: true }),
          default_cpu: string('CPU given to a container that asks for none.', { optional: true }),
          default_memory: string('Memory given to a container that asks for none.', { optional: true }),
          default_cpu_request: string('CPU request given to a container that asks for none, when below `default_cpu` (a Paddock extension, like a LimitRange `defaultRequest`).', { optional: true }),
          default_memory_request: string('Memory request given to a container that asks for none, when below `default_memory` (a Paddock extension).', { optional: true }),
          max_gpu_count: number('Most GPUs per container; unset means no cap, `0` forbids GPUs.', { optional: true }),
          cpu_ceiling: string('Ceiling on the sum of CPU requests of the whole sandbox.', { optional: true }),
          memory_ceiling: string('Ceiling on the sum of memory requests of the whole sandbox.', { optional: true }),
          require_limits: bool('Every container must declare requests and limits.', { optional: true }),
        },
        'Per-container bounds and whole-sandbox ceilings.',
        { optional: true },
      ),
      image: object(
        {
          allowed_registries: set('string', 'Registry prefixes images may come from; empty means any.', { optional: true }),
          allowed_images: set('string', 'Image references allowed; empty means any within the registries.', { optional: true }),
        },
        'Where sandbox images may come from.',
        { optional: true },
      ),
      network: object(
        {
          allowed_egress: listOf(egressRule, 'The egress envelope sandboxes may declare within; empty means no restriction.', { optional: true }),
          default_egress: listOf(egressRule, 'Egress given to a sandbox that declares none (no hostname peers).', { optional: true }),
          deny_https_hostname_rules: bool('Forbid HTTPS-hostname egress grants.', { optional: true }),
          deny_dns: bool('Legacy spelling of `deny_https_hostname_rules`.', { optional: true }),
          allowed_ingress: listOf(ingressRule, 'The ingress envelope for CUSTOM-visibility ports.', { optional: true }),
          default_ingress: listOf(ingressRule, 'Ingress given to a sandbox that declares none.', { optional: true }),
          dns_egress: string('`DNS_EGRESS_MODE_ALLOW` or `DNS_EGRESS_MODE_DENY`.', { optional: true }),
        },
        'Egress and ingress rules.',
        { optional: true },
      ),
      security: object(
        {
          allow_privileged: bool('Permit privileged containers.', { optional: true }),
          allowed_capabilities: set('string', 'Linux capabilities containers may add.', { optional: true }),
          allowed_seccomp_profiles: set('string', 'Seccomp profiles containers may use.', { optional: true }),
          allowed_runtime_classes: set('string', 'Runtime classes a sandbox may pin; empty forbids any pin.', { optional: true }),
          default_cpu_runtime_class: string('Runtime class of sandboxes without GPUs.', { optional: true }),
          default_gpu_runtime_class: string('Runtime class of GPU sandboxes.', { optional: true }),
        },
        'Privilege, capabilities, seccomp and runtime classes.',
        { optional: true },
      ),
      instance: object(
        { allowed_instance_types: set('string', 'Instance types a sandbox may pin; empty means any the runner offers.', { optional: true }) },
        'Instance types.',
        { optional: true },
      ),
      lifecycle: object(
        {
          default_lifetime_seconds: number('Lifetime of a sandbox that sets none, 0-2592000 (0: the platform default).', { optional: true }),
          idle_timeout_seconds: number(
            'Pause (never delete) a sandbox with no exec, file or log traffic for this long: 0 (never) or 10-2592000. A Paddock extension.',
            { optional: true },
          ),
        },
        'Sandbox lifetime defaults, and the idle timeout.',
        { optional: true },
      ),
      metadata: object(
        {
          denied_annotation_prefixes: set('string', 'Annotation key prefixes sandboxes may not use.', { optional: true }),
          max_annotation_count: number('Most annotations per sandbox (0: no limit).', { optional: true }),
        },
        'Sandbox annotations.',
        { optional: true },
      ),
      volumes: object(
        {
          allowed_media: set('string', '`STORAGE_MEDIUM_DISK`, `STORAGE_MEDIUM_MEMORY`; empty means any.', { optional: true }),
          max_size: string('Largest volume (Kubernetes quantity).', { optional: true }),
        },
        'Sandbox volumes.',
        { optional: true },
      ),
    },
    'Typed constraints every sandbox is validated against.',
    { optional: true },
  ),
  control_plane_access: object(
    {
      source_ip_allowlist: object(
        { cidrs: set('string', 'Canonical, non-redundant prefixes (at most 256); empty denies every public source.', { optional: true }) },
        'Public sources allowed to reach this runner\'s sandboxes; unset means no restriction.',
        { optional: true },
      ),
    },
    'Who may reach the sandboxes of this runner.',
    { optional: true },
  ),
} satisfies Attributes;

/** The runner settings: release channel, maintenance, overrides of its own deployment. */
export const SPEC_ATTRIBUTES = {
  release_channel: string('`RELEASE_CHANNEL_STABLE` (default) or `RELEASE_CHANNEL_RAPID`.', { optional: true, computed: true }),
  maintenance_policy: object(
    {
      windows: listOf(
        {
          cron: string('When a window opens: a five-field cron expression in UTC, e.g. `0 2 * * SAT`.', { required: true }),
          duration_seconds: number('How long it stays open, 60-604800 seconds.', { required: true }),
        },
        'Windows in which an update may start; none means any time outside the exclusions.',
        { optional: true, wire: { unsetWhen: [] } },
      ),
      exclusions: listOf(
        {
          start_time: string('RFC 3339, inclusive.', { required: true }),
          end_time: string('RFC 3339, exclusive; after `start_time`.', { required: true }),
          reason: string('Why updates are paused.', { optional: true }),
        },
        'One-time periods in which no update may start; they win over windows.',
        { optional: true, wire: { unsetWhen: [] } },
      ),
    },
    'When updates of the runner may start. Removing it resets it.',
    { optional: true, wire: { unsetWhen: { windows: [], exclusions: [] } } },
  ),
  overrides: object(
    {
      node_selector: map('string', 'Node labels the runner pods must run on.', { optional: true }),
      tolerations: listOf(
        {
          key: string('Taint key.', { optional: true }),
          operator: string('`Equal` or `Exists`.', { optional: true }),
          value: string('Taint value.', { optional: true }),
          effect: string('`NoSchedule`, `PreferNoSchedule`, `NoExecute`, or `""` for every effect.', { optional: true }),
        },
        'Taints the runner pods tolerate.',
        { optional: true },
      ),
      resources: object(
        {
          cpu_request: string('CPU request of the runner pods (Kubernetes quantity).', { optional: true }),
          memory_request: string('Memory request of the runner pods.', { optional: true }),
          cpu_limit: string('CPU limit of the runner pods.', { optional: true }),
          memory_limit: string('Memory limit of the runner pods.', { optional: true }),
        },
        'Resources of the runner\'s own pods.',
        { optional: true },
      ),
      annotations: map('string', 'Annotations of the runner pods.', { optional: true }),
      labels: map('string', 'Labels of the runner pods.', { optional: true }),
      env: map('string', 'Environment of the runner (stored in state, marked sensitive).', { optional: true, sensitive: true }),
      args: list('string', 'Command-line arguments of the runner, in order.', { optional: true }),
      scaling: object(
        {
          replicas: number('Replica count.', { optional: true }),
          autoscaling_enabled: bool('Scale between `min_replicas` and `max_replicas`.', { optional: true }),
          min_replicas: number('Fewest replicas.', { optional: true }),
          max_replicas: number('Most replicas.', { optional: true }),
        },
        'Runner replicas.',
        { optional: true },
      ),
      cpu_runtime_class: string('Refused when set: no runner applies it; use the policy security.default_cpu_runtime_class.', { optional: true }),
      gpu_runtime_class: string('Refused when set: no runner applies it; use the policy security.default_gpu_runtime_class.', { optional: true }),
      affinity: string('Kubernetes `Affinity` of the runner pods as JSON (`jsonencode({...})`); `jsonencode({})` clears every rule, unset restores the platform defaults.', {
        optional: true,
        wire: { json: 'text' },
      }),
    },
    'Overrides of the runner\'s Deployment. Any change replaces the whole object: keep every override you want.',
    { optional: true, wire: { unsetWhen: {} } },
  ),
  enforce_resource_limits: bool('Refused when true: no runner applies it; use the policy resources.require_limits.', { optional: true, wire: { unsetWhen: false } }),
} satisfies Attributes;

/** Attributes the configuration sets; the rest of the resource is computed. */
export const CONFIGURABLE = ['runner_id', 'cluster_id', 'zone', 'display_name', 'runner_group_id', 'spec', 'policy'] as const;
/** Changing one of these creates a new runner instead of updating this one. */
export const FORCES_REPLACEMENT = ['runner_id', 'cluster_id', 'zone'] as const;
/** Computed attributes that never change for the life of a runner. */
export const STABLE_COMPUTED = ['id', 'uid', 'cluster_name', 'create_time'] as const;

export const RESOURCE_ATTRIBUTES = {
  id: string('The runner id (same as `runner_id`).', { computed: true, wire: { key: 'runnerId' } }),
  runner_id: string('Runner identifier, unique within the organization. Changing it replaces the runner.', { required: true }),
  cluster_id: string('UUID of the cluster the runner serves. Changing it replaces the runner.', { required: true }),
  zone: string('Availability zone of the cluster, lower case (use `lower(...)`). Changing it replaces the runner.', { required: true }),
  display_name: string('Human-readable name.', { optional: true, wire: { unsetWhen: '' } }),
  runner_group_id: string('Runner group; unset means `default`.', { optional: true, computed: true }),
  spec: object(SPEC_ATTRIBUTES, 'Runner settings; unset adopts the platform defaults.', { optional: true, computed: true }),
  policy: object(POLICY_ATTRIBUTES, 'The sandbox policy of this runner (required; `{}` is the explicit empty, permissive policy). Written with the `etag` read at refresh.', {
    required: true,
  }),
  uid: string('Server-assigned UUID of the runner.', { computed: true }),
  cluster_name: string('Name of the cluster.', { computed: true }),
  etag: string('Policy revision token read at the last refresh; policy writes carry it.', { computed: true }),
  install_status: string('`RUNNER_INSTALL_STATUS_*`: PENDING, PROVISIONING, READY, FAILED, DELETING.', { computed: true }),
  install_error: string('Why the install failed, as JSON (`reason`, `message`, `diagnosticDetail`, `remediationHints`, `occurredAt`); null unless FAILED.', {
    computed: true,
    wire: { json: 'document' },
  }),
  connection_status: string('`RUNNER_CONNECTION_STATUS_CONNECTED` or `..._DISCONNECTED`, from the runner\'s heartbeats.', { computed: true }),
  active_revision: number('Runner release revision rolled out.', { computed: true }),
  target_revision: number('Runner release revision being rolled out.', { computed: true }),
  rollout_in_progress: bool('True while `target_revision` is not yet active.', { computed: true }),
  update_available: bool('A newer release is available on the channel.', { computed: true }),
  deployment_spec: string('The deployment the platform renders for the runner, as JSON (read-only).', { computed: true, sensitive: true, wire: { json: 'document' } }),
  create_time: string('RFC 3339.', { computed: true }),
  update_time: string('RFC 3339.', { computed: true }),
  last_heartbeat_time: string('RFC 3339; null before the first heartbeat.', { computed: true }),
} satisfies Attributes;

export const RESOURCE_SCHEMA: Schema = {
  version: 0,
  description: 'A CoreWeave Sandbox managed runner and its sandbox policy.',
  attributes: RESOURCE_ATTRIBUTES,
};

/** The data source reads one runner by id; everything else is what the API reports. */
export const DATA_SOURCE_SCHEMA: Schema = {
  version: 0,
  description: 'Reads a managed runner (its settings, policy and status) by runner id.',
  attributes: {
    ...allComputed(RESOURCE_ATTRIBUTES),
    runner_id: string('Runner identifier (or the runner\'s UUID).', { required: true }),
  },
};
