export { createKubeStore, type KubeStore, type KubeStoreOptions } from './store.ts';
export { createKubeClient, type KubeClient, type KubeClientOptions } from './client.ts';
export type { WatchTimings } from './watch.ts';
