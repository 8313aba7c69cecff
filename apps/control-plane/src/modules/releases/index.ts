export { ReleasesModule } from './releases.module';
export { ReleaseCatalog } from './release-catalog';
export type { Release, PublishableChannel } from './releases.schemas';
export type { ReleasesTables } from './releases.tables';
