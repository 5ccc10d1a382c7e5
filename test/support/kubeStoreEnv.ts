import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startKubeApiServer, type KubeApiServer } from './kubeApiServer.ts';

export interface KubeTestEnv {
  /** The test file's API server (from its beforeAll on). */
  readonly kube: KubeApiServer;
  /** Runs `fn` after the current test, pass or fail; the last registered runs first. */
  cleanup(fn: () => Promise<unknown> | unknown): void;
  /** Creates a namespace no other test of the file uses (namespaces are never deleted: that takes kube-controller-manager). */
  freshNamespace(prefix: string): Promise<string>;
}

/** Registers the hooks of a test file that runs against one real API server of its own. */
export function useKubeApiServer(): KubeTestEnv {
  let kube: KubeApiServer | undefined;
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  let seq = 0;
  beforeAll(async () => {
    kube = await startKubeApiServer();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await kube?.stop();
  });
  const env: KubeTestEnv = {
    get kube() {
      if (!kube) throw new Error('the API server is not started yet: use it inside tests or hooks');
      return kube;
    },
    cleanup: (fn) => void cleanups.push(fn),
    async freshNamespace(prefix) {
      const name = `${prefix}-${++seq}`;
      await env.kube.kubeConfig().makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
      return name;
    },
  };
  return env;
}
