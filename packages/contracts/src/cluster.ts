import { z } from 'zod';

/**
 * A CKS-style cluster registered with the control plane (`cwic cluster get`). The server assigns
 * the UUID; names are unique within an organization. A runner is placed on a cluster by its id
 * or name.
 */
export const ClusterSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  zone: z.string(),
  createTime: z.string(),
});
export type Cluster = z.infer<typeof ClusterSchema>;

/** DNS-label style, like Kubernetes object names. */
export const CLUSTER_NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** Zones are lowercase (`zone must be lowercase`), e.g. `us-east-04a`. */
export const ZONE_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const RegisterClusterRequestSchema = z.object({
  name: z
    .string({ error: 'name is required' })
    .min(1, 'name is required')
    .regex(CLUSTER_NAME_PATTERN, 'name must be a DNS label: lowercase letters, digits and "-", at most 63 characters'),
  zone: z
    .string({ error: 'zone is required' })
    .min(1, 'zone is required')
    .refine((z) => z === z.toLowerCase(), 'zone must be lowercase')
    .refine((z) => z !== z.toLowerCase() || ZONE_PATTERN.test(z), 'zone must contain only lowercase letters, digits and "-"'),
});
export type RegisterClusterRequest = z.infer<typeof RegisterClusterRequestSchema>;

export const ListClustersResponseSchema = z.object({ clusters: z.array(ClusterSchema) });
export type ListClustersResponse = z.infer<typeof ListClustersResponseSchema>;
