import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../../store/kube/client.ts';
import { toStoreError } from '../../store/kube/errors.ts';
import { isStoreError } from '../../store/types.ts';
import { newSecretRef, SECRET_REF, type WebhookSecretStore } from './types.ts';

/** Labels on every webhook signing Secret: `kubectl get secrets -l agentwallet.dev/webhook-secret-of=<id>`. */
export const WEBHOOK_SECRET_LABELS = {
  partOf: 'app.kubernetes.io/part-of',
  clientId: 'agentwallet.dev/webhook-secret-of',
} as const;
const DATA_KEY = 'secret';

export interface KubeWebhookSecretsOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  requestTimeoutMs?: number;
}

/**
 * A cluster's webhook secrets: one immutable Secret per secret in the service's namespace. The key CLI
 * (`keys create|rotate-webhook-secret --kube`) creates them; the controller reads them (get by name: its Role
 * has no list or watch on Secrets). Nothing else holds the value.
 */
export function kubeWebhookSecrets(opts: KubeWebhookSecretsOptions): WebhookSecretStore & { close(): void } {
  const client = createKubeClient(opts.kubeConfig);
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  const timeout = () => client.withTimeout(opts.requestTimeoutMs ?? 15_000);
  const { namespace } = opts;

  return {
    async create(clientId, secret) {
      const ref = newSecretRef(clientId);
      try {
        await core.createNamespacedSecret(
          {
            namespace,
            body: {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: ref, labels: { [WEBHOOK_SECRET_LABELS.partOf]: 'agent-wallet', [WEBHOOK_SECRET_LABELS.clientId]: clientId } },
              type: 'Opaque',
              immutable: true,
              stringData: { [DATA_KEY]: secret },
            },
          },
          timeout(),
        );
      } catch (e) {
        throw toStoreError(e, { verb: 'create', what: `Secret ${namespace}/${ref}` });
      }
      return ref;
    },
    async read(ref) {
      if (!SECRET_REF.test(ref)) return undefined;
      try {
        const s = await core.readNamespacedSecret({ name: ref, namespace }, timeout());
        const value = s.data?.[DATA_KEY];
        return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8').trim();
      } catch (e) {
        const err = toStoreError(e, { verb: 'get', what: `Secret ${namespace}/${ref}` });
        if (isStoreError(err, 'NotFound')) return undefined;
        throw err;
      }
    },
    close: () => client.close(),
  };
}
