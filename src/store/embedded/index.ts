export { openEmbeddedStore, type EmbeddedStore, type EmbeddedStoreOptions, type EmbeddedStoreStats } from './store.ts';
export { canonicalDir, storeOwner } from './lock.ts';
