/**
 * vitest globalSetup of the cluster project: one real kube-apiserver (with etcd, CRDs applied) and one real
 * Redis for the run; test files start the roles as processes against them (test/support/cluster.ts), each in
 * a namespace of its own.
 */
import { startKubeApiServer, type KubeApiServer } from '../support/kubeApiServer.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';
import { join, resolve } from 'node:path';
import { tempDir } from '../support/env.ts';
import { AUDIT_LOG_ENV, KUBECONFIG_ENV, REDIS_URL_ENV, TARGET_ENV } from '../support/cluster.ts';

let api: KubeApiServer | undefined;
let redis: TestRedis | undefined;

export async function setup(): Promise<void> {
  const t0 = performance.now();
  // The audit log an operator's cluster keeps with deploy/kind/audit-policy.yaml: key and policy changes, by whom.
  const auditLog = join(tempDir('aw-audit-'), 'audit.log');
  [api, redis] = await Promise.all([
    // its output's tail is in the error if it fails to start
    startKubeApiServer({ apiServerArgs: [`--audit-policy-file=${resolve(import.meta.dirname, '../../deploy/kind/audit-policy.yaml')}`, `--audit-log-path=${auditLog}`] }),
    startRedis({ appendonly: true }),
  ]);
  process.env[KUBECONFIG_ENV] = api.kubeconfigPath;
  process.env[REDIS_URL_ENV] = redis.url;
  process.env[TARGET_ENV] = 'cluster';
  process.env[AUDIT_LOG_ENV] = auditLog;
  console.error(`[cluster] kube-apiserver ${api.server} and redis ${redis.url} up in ${Math.round(performance.now() - t0)} ms`);
}

export async function teardown(): Promise<void> {
  await Promise.all([api?.stop(), redis?.stop()]);
  api = undefined;
  redis = undefined;
}
