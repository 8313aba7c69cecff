import { Injectable } from '@nestjs/common';
import { PaddockError, type Cluster, type RegisterClusterRequest } from '@paddock/contracts';
import { Clock, IdGenerator } from '../../infrastructure/tokens';
import { ClustersRepository, type ClusterRow } from './clusters.repository';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function toCluster(row: ClusterRow): Cluster {
  return { id: row.id, name: row.name, zone: row.zone, createTime: row.created_at.toISOString() };
}

export interface ResolvedCluster {
  id: string;
  name: string;
  zone: string;
}

@Injectable()
export class ClustersService {
  constructor(
    private readonly repo: ClustersRepository,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /**
   * Idempotent by name within the organization: registering the same name and zone again
   * returns the existing cluster; the same name in another zone is a conflict.
   */
  async register(organizationId: string, req: RegisterClusterRequest): Promise<{ cluster: Cluster; created: boolean }> {
    const { row, created } = await this.repo.insertOrGet({
      id: this.ids.uuid(),
      organizationId,
      name: req.name,
      zone: req.zone,
      at: this.clock.now(),
    });
    if (!created && row.zone !== req.zone) {
      throw new PaddockError('already_exists', `cluster "${req.name}" already exists in zone "${row.zone}"; a cluster cannot move to zone "${req.zone}"`, {
        violations: [{ field: 'zone', rule: 'immutable', description: `cluster "${req.name}" is registered in zone "${row.zone}"` }],
      });
    }
    return { cluster: toCluster(row), created };
  }

  async list(organizationId: string): Promise<Cluster[]> {
    return (await this.repo.list(organizationId)).map(toCluster);
  }

  /** By UUID or by name; clusters of other organizations are not_found. */
  async get(organizationId: string, idOrName: string): Promise<Cluster> {
    const row = UUID.test(idOrName)
      ? await this.repo.findById(organizationId, idOrName.toLowerCase())
      : await this.repo.findByName(organizationId, idOrName);
    if (!row) throw new PaddockError('not_found', `cluster "${idOrName}" not found`);
    return toCluster(row);
  }

  /**
   * Resolves the cluster a runner names (by id, or by name when no id is given). Returns
   * undefined when it does not exist in this organization; the caller words the error.
   */
  async resolve(organizationId: string, ref: { clusterId?: string; clusterName?: string }): Promise<ResolvedCluster | undefined> {
    let row: ClusterRow | undefined;
    if (ref.clusterId) {
      row = UUID.test(ref.clusterId) ? await this.repo.findById(organizationId, ref.clusterId.toLowerCase()) : undefined;
    } else if (ref.clusterName) {
      row = await this.repo.findByName(organizationId, ref.clusterName);
    }
    return row ? { id: row.id, name: row.name, zone: row.zone } : undefined;
  }
}
