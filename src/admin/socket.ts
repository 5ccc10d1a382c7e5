import { request } from 'node:http';
import { hostname, userInfo } from 'node:os';
import { chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DEFAULT_NAMESPACE, PaymentModeSchema } from '../api/v1alpha1/index.ts';
import { OperatorAgentScopeSchema } from '../keys/agentScope.ts';
import { createHttpApp } from '../http/app.ts';
import { AgentWalletError } from '../lib/errors.ts';
import { stderrLogger, type Logger } from '../lib/logger.ts';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../lib/privateFs.ts';
import { isStoreError, type ResourceStore } from '../store/types.ts';
import { auditedStore, auditLogPath, fileAuditLog, type AuditLog } from '../store/audit/index.ts';
import { createKey, KeyError, listKeys, revokeKey, rotateKey, rotateWebhookSecret, setKeyMode } from '../keys/manage.ts';
import { applyPolicy, deletePolicy, getPolicy, listPolicies, PolicyError, setSuspended } from '../policy/manage.ts';
import { openFileWebhookSecrets, webhookSecretsDir } from '../webhooks/secrets/files.ts';
import type { WebhookSecretStore } from '../webhooks/secrets/types.ts';

/**
 * The embedded store belongs to one process. So that an operator can manage keys while `dev` runs, the
 * owner serves these actions on a Unix socket inside the data directory, with no other authentication: only
 * the service's user can reach it (the directory 0700, the socket 0600), and nothing is exposed on TCP. The
 * keys and policy CLI use it when the store is owned.
 */
export const adminSocketPath = (dataDir: string): string => join(dataDir, 'admin.sock');

const CreateBody = z.object({
  mode: PaymentModeSchema,
  name: z.string().max(200).optional(),
  requestsPerSecond: z.number().positive().optional(),
  burst: z.number().int().positive().optional(),
  agentScope: OperatorAgentScopeSchema.optional(),
});
const KeyParams = z.object({ id: z.string().min(1).max(253) });
const SetModeBody = z.object({ mode: PaymentModeSchema });
/** Optional: no body means the default overlap (a day). */
const RotateWebhookSecretBody = z.object({ overlapSeconds: z.number().int().min(0).max(30 * 86_400).optional() }).nullish();

/** What each key-management error means to the caller of the socket. */
const KEY_ERROR_STATUS: Readonly<Record<KeyError['code'], number>> = { key_not_found: 404, key_revoked: 409 };

const PolicyParams = z.object({ name: z.string().min(1).max(253) });
const PolicyListQuery = z.object({ client: z.string().min(1).max(253).optional() });
/** Policy-management errors: a policy that cannot be applied as written is 400, a reference to nothing 404/422. */
const POLICY_ERROR_STATUS: Readonly<Record<PolicyError['code'], number>> = { invalid_policy: 400, unknown_api_client: 422, policy_not_found: 404 };

/**
 * The socket's one error handler: key errors with their own status, invalid input 400, a store that cannot
 * answer 503; anything else is logged here and answered without its message (it may name internal paths).
 */
function handleAdminError(log: Logger) {
  return (error: Error, _req: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof KeyError) return reply.code(KEY_ERROR_STATUS[error.code]).send({ error: error.code, message: error.shortMessage });
    if (error instanceof PolicyError) return reply.code(POLICY_ERROR_STATUS[error.code]).send({ error: error.code, message: error.shortMessage });
    if (hasZodFastifySchemaValidationErrors(error)) return reply.code(400).send({ error: 'invalid_request', message: error.message });
    if (isStoreError(error, 'Unavailable')) return reply.code(503).send({ error: 'store_unavailable', message: 'the store cannot be reached; retry' });
    log.error({ err: error }, 'admin socket: request failed');
    return reply.code(500).send({ error: 'internal_error', message: 'internal error; see the service log' });
  };
}

export async function serveAdminSocket(
  store: ResourceStore,
  dataDir: string,
  opts: { namespace?: string; logger?: Logger; webhookSecrets?: WebhookSecretStore; audit?: AuditLog } = {},
): Promise<FastifyInstance> {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  // The service's own secret store: the one its webhook sender reads.
  const webhookSecrets = opts.webhookSecrets ?? openFileWebhookSecrets(webhookSecretsDir(dataDir));
  // Its own error answers (its callers are the keys and policy CLI); no connection limits: only the service's user can connect.
  const app = createHttpApp({ errors: { kind: 'own', handler: handleAdminError(opts.logger ?? stderrLogger) } });
  // Every write of a key or a policy is recorded in the data directory's audit log, by the actor the CLI names.
  const audit = opts.audit ?? fileAuditLog(auditLogPath(dataDir));
  const as = (req: FastifyRequest) => auditedStore(store, audit, `${actorHeader(req)} (admin socket)`);
  app.get('/keys', async (req) => listKeys(as(req), namespace));
  app.post('/keys', { schema: { body: CreateBody } }, async (req) => createKey(as(req), req.body, namespace, webhookSecrets));
  app.post('/keys/:id/revoke', { schema: { params: KeyParams } }, async (req) => revokeKey(as(req), req.params.id, namespace));
  app.post('/keys/:id/rotate', { schema: { params: KeyParams } }, async (req) => rotateKey(as(req), req.params.id, namespace));
  app.post('/keys/:id/mode', { schema: { params: KeyParams, body: SetModeBody } }, async (req) => setKeyMode(as(req), req.params.id, req.body.mode, namespace));
  app.post('/keys/:id/rotate-webhook-secret', { schema: { params: KeyParams, body: RotateWebhookSecretBody } }, async (req) =>
    rotateWebhookSecret(as(req), webhookSecrets, req.params.id, req.body ?? {}, namespace),
  );
  // AgentPolicies: written here and by --kube only, never through the gateway (docs/policies.md). The PUT body is the
  // policy's spec; the name is the path's (validated with the spec by applyPolicy).
  app.get('/policies', { schema: { querystring: PolicyListQuery } }, async (req) =>
    listPolicies(as(req), namespace, req.query.client === undefined ? {} : { apiClient: req.query.client }),
  );
  app.get('/policies/:name', { schema: { params: PolicyParams } }, async (req) => getPolicy(as(req), namespace, req.params.name));
  app.put('/policies/:name', { schema: { params: PolicyParams } }, async (req) => applyPolicy(as(req), namespace, { name: req.params.name, spec: req.body }));
  app.delete('/policies/:name', { schema: { params: PolicyParams } }, async (req) => deletePolicy(as(req), namespace, req.params.name));
  app.post('/policies/:name/suspend', { schema: { params: PolicyParams } }, async (req) => setSuspended(as(req), namespace, req.params.name, true));
  app.post('/policies/:name/resume', { schema: { params: PolicyParams } }, async (req) => setSuspended(as(req), namespace, req.params.name, false));
  const path = adminSocketPath(dataDir);
  // bind() makes the socket 0777 minus the umask, and chmod can only follow it. Connecting needs search
  // permission on the directory too, so the directory is made 0700 first: nobody else can reach the socket in
  // between. (Setting the umask around listen is not safe here: it is the whole process's, and the store,
  // archive and devnet create files concurrently.) The chmod then keeps it private if the directory is opened up.
  await ensurePrivateDir(dataDir);
  await rm(path, { force: true }); // a socket file left by a killed owner
  await app.listen({ path });
  try {
    await chmod(path, PRIVATE_FILE_MODE);
  } catch (e) {
    await app.close();
    throw e;
  }
  return app;
}

/** The header the CLI names its user in (informational: only the service's own OS user can reach the socket). */
export const ACTOR_HEADER = 'x-agent-wallet-actor';
const actorHeader = (req: FastifyRequest): string => {
  const v = req.headers[ACTOR_HEADER];
  return typeof v === 'string' && /^[\x20-\x7e]{1,200}$/.test(v) ? v : 'unnamed';
};

/** Who runs this process, as the audit log names them: `user@host`. */
export const localActor = (): string => `${userInfo().username}@${hostname()}`;

/** Calls the running owner's admin socket; resolves to the parsed JSON body or rejects with its error. */
export function callAdminSocket(dataDir: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath: adminSocketPath(dataDir),
        method,
        path,
        headers: { [ACTOR_HEADER]: localActor(), ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const parsed = text ? JSON.parse(text) : undefined;
          if ((res.statusCode ?? 500) >= 400) reject(new AgentWalletError(parsed?.error ?? 'admin_error', parsed?.message ?? text));
          else resolve(parsed);
        });
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
