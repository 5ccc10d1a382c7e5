export { openEmbeddedStore, type EmbeddedStore, type EmbeddedStoreOptions, type EmbeddedStoreStats } from './store.ts';
export { storeOwner } from './lock.ts';
