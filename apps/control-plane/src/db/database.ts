import type { RunnersTables } from '../modules/runners/runners.tables';
import type { IdentityTables } from '../modules/identity/identity.tables';
import type { ClustersTables } from '../modules/clusters/clusters.tables';
import type { ReleasesTables } from '../modules/releases/releases.tables';
import type { SecretStoresTables } from '../modules/secret-stores/secret-stores.tables';

/** Every app table the control plane owns (the event store's own tables are typed by its package). */
export interface CpDatabase extends RunnersTables, IdentityTables, ClustersTables, ReleasesTables, SecretStoresTables {}
