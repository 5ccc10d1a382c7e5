import { DEFAULT_NAMESPACE, PAYMENT_MODES, type PaymentMode } from '../api/v1alpha1/index.ts';
import { callAdminSocket } from '../admin/socket.ts';
import { createKey, listKeys, revokeKey, rotateKey, type KeySummary } from '../keys/manage.ts';
import { openEmbeddedStore, storeOwner } from '../store/embedded/index.ts';
import type { ResourceStore } from '../store/types.ts';
import { CliError, dataDirOption, parse, resolveDataDir } from '../lib/args.ts';
import { join } from 'node:path';

/**
 * `agent-wallet keys ...`: when a service owns the data directory's store, the action goes through its admin
 * socket; otherwise the CLI opens the store itself (and holds its lock for the moment it runs).
 */
export async function runKeys(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...dataDirOption,
    mode: { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean', default: false },
    kube: { type: 'boolean', default: false },
    namespace: { type: 'string' },
    kubeconfig: { type: 'string' },
  });
  const [action, id] = positionals;
  const json = values.json === true;
  const kube = values.kube === true;
  // A cluster's ApiClients live in the API server: no data dir, no admin socket.
  const namespace = values.namespace ?? process.env.POD_NAMESPACE ?? DEFAULT_NAMESPACE;
  const dataDir = resolveDataDir(values['data-dir']);
  const storeDir = join(dataDir, 'store');
  const owned = !kube && (await storeOwner(storeDir));

  const direct = async <T>(fn: (store: ResourceStore, namespace: string) => Promise<T>): Promise<T> => {
    // Loaded only for --kube: the Kubernetes client is a large import the embedded CLI does not need.
    const store = kube ? await openKubeStore(values.kubeconfig, namespace) : await openEmbeddedStore({ dir: storeDir });
    try {
      return await fn(store, kube ? namespace : DEFAULT_NAMESPACE);
    } finally {
      await store.close();
    }
  };

  switch (action) {
    case 'create': {
      const mode = values.mode as PaymentMode | undefined;
      if (!mode || !PAYMENT_MODES.includes(mode)) throw new CliError(`--mode must be one of ${PAYMENT_MODES.join(', ')}`);
      const opts = { mode, ...(values.name !== undefined && { name: values.name }) };
      const out = (owned
        ? await callAdminSocket(dataDir, 'POST', '/keys', opts)
        : await direct((s, ns) => createKey(s, opts, ns))) as { api_key: string; key: KeySummary };
      printKey(out, json, 'created');
      return 0;
    }
    case 'list': {
      const keys = (owned ? await callAdminSocket(dataDir, 'GET', '/keys') : await direct((s, ns) => listKeys(s, ns))) as KeySummary[];
      if (json) process.stdout.write(JSON.stringify(keys, null, 2) + '\n');
      else if (keys.length === 0) process.stdout.write('no keys\n');
      else
        for (const k of keys)
          process.stdout.write(
            `${k.id}  ${k.mode.padEnd(9)} ${k.enabled ? 'enabled ' : 'revoked '} ${k.created_at ?? ''}  ${k.name ?? ''}\n`,
          );
      return 0;
    }
    case 'revoke': {
      if (!id) throw new CliError('usage: keys revoke <id>');
      const k = (owned
        ? await callAdminSocket(dataDir, 'POST', `/keys/${encodeURIComponent(id)}/revoke`)
        : await direct((s, ns) => revokeKey(s, id, ns))) as KeySummary;
      process.stdout.write(json ? JSON.stringify(k) + '\n' : `revoked ${k.id}\n`);
      return 0;
    }
    case 'rotate': {
      if (!id) throw new CliError('usage: keys rotate <id>');
      const out = (owned
        ? await callAdminSocket(dataDir, 'POST', `/keys/${encodeURIComponent(id)}/rotate`)
        : await direct((s, ns) => rotateKey(s, id, ns))) as { api_key: string; key: KeySummary };
      printKey(out, json, 'rotated');
      return 0;
    }
    default:
      throw new CliError('usage: keys create|list|revoke|rotate (see agent-wallet help)');
  }
}

function printKey(out: { api_key: string; key: KeySummary }, json: boolean, verb: string): void {
  if (json) {
    process.stdout.write(JSON.stringify({ api_key: out.api_key }) + '\n');
    return;
  }
  process.stdout.write(
    `${verb} key ${out.key.id} (mode ${out.key.mode})\n\n  ${out.api_key}\n\n` +
      'This is the only time the key is shown: store it in your agent\'s server-side configuration.\n',
  );
}

async function openKubeStore(kubeconfig: string | undefined, namespace: string): Promise<ResourceStore> {
  const [{ createKubeStore }, { loadKubeConfig }] = await Promise.all([
    import('../store/kube/index.ts'),
    import('../roles/cluster/runtime.ts'),
  ]);
  return createKubeStore({ kubeConfig: loadKubeConfig(kubeconfig), namespace });
}
