import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll } from 'vitest';
import { startKubeApiServer, type KubeApiServer } from '../../../test/support/kubeApiServer.ts';
import { describeResourceStoreConformance } from '../conformance.ts';
import { createKubeStore } from './index.ts';

let kube: KubeApiServer;
beforeAll(async () => {
  kube = await startKubeApiServer();
});
afterAll(async () => {
  await kube?.stop();
});

let seq = 0;
describeResourceStoreConformance('kube', async () => {
  // Namespaces are never deleted here (that takes kube-controller-manager): each test gets two new ones.
  const core = kube.kubeConfig().makeApiClient(CoreV1Api);
  const namespace = `conformance-${++seq}`;
  const otherNamespace = `${namespace}-other`;
  for (const name of [namespace, otherNamespace]) await core.createNamespace({ body: { metadata: { name } } });
  return {
    store: createKubeStore({ kubeConfig: kube.kubeConfig(), namespace }),
    namespace,
    otherNamespace,
    // The watch cache starts at the version the CRD was established at: anything older is Gone.
    tooOldResourceVersion: async () => '1',
  };
});
