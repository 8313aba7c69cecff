export { ClustersModule } from './clusters.module';
export { ClustersService, type ResolvedCluster } from './clusters.service';
export type { ClustersTables } from './clusters.tables';
