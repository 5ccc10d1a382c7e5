import { request } from 'node:http';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { z } from 'zod';
import { PaymentModeSchema } from '../api/v1alpha1/index.ts';
import { AgentWalletError } from '../lib/errors.ts';
import type { ResourceStore } from '../store/types.ts';
import { createKey, listKeys, revokeKey, rotateKey } from '../keys/manage.ts';

/**
 * The embedded store belongs to one process. So that an operator can manage keys while `dev` runs, the
 * owner serves these actions on a Unix socket inside the data directory: only who can read the data
 * directory can reach it, and nothing is exposed on TCP. The keys CLI uses it when the store is owned.
 */
export const adminSocketPath = (dataDir: string): string => join(dataDir, 'admin.sock');

const CreateBody = z.object({
  mode: PaymentModeSchema,
  name: z.string().max(200).optional(),
  requestsPerSecond: z.number().positive().optional(),
  burst: z.number().int().positive().optional(),
});

export async function serveAdminSocket(store: ResourceStore, dataDir: string, namespace = 'default'): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.setErrorHandler((error, _req, reply) => {
    if (error instanceof AgentWalletError) return reply.code(404).send({ error: error.code, message: error.shortMessage });
    if (error instanceof z.ZodError) return reply.code(400).send({ error: 'invalid_request', message: error.message });
    return reply.code(500).send({ error: 'internal_error', message: String((error as Error).message) });
  });
  app.get('/keys', async () => listKeys(store, namespace));
  app.post('/keys', async (req) => createKey(store, CreateBody.parse(req.body), namespace));
  app.post('/keys/:id/revoke', async (req) => revokeKey(store, (req.params as { id: string }).id, namespace));
  app.post('/keys/:id/rotate', async (req) => rotateKey(store, (req.params as { id: string }).id, namespace));
  const path = adminSocketPath(dataDir);
  await rm(path, { force: true }); // a socket file left by a killed owner
  await app.listen({ path });
  return app;
}

/** Calls the running owner's admin socket; resolves to the parsed JSON body or rejects with its error. */
export function callAdminSocket(dataDir: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath: adminSocketPath(dataDir),
        method,
        path,
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
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
