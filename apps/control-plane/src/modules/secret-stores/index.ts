export { SecretStoresModule } from './secret-stores.module';
export type { SecretStoresTables } from './secret-stores.tables';
