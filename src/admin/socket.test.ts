import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { tempDir } from '../../test/support/env.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { callAdminSocket, serveAdminSocket } from './socket.ts';

describe('admin socket', () => {
  let dir: string;
  let store: EmbeddedStore;
  let admin: FastifyInstance;
  const logged: unknown[] = [];

  beforeAll(async () => {
    dir = tempDir();
    store = await openEmbeddedStore({ dir: `${dir}/store` });
    const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (o: object) => void logged.push(o) };
    admin = await serveAdminSocket(store, dir, { logger });
  });
  afterAll(async () => {
    await admin.close();
    await store.close();
  });

  const failure = (p: Promise<unknown>) => p.then(() => expect.unreachable('should fail'), (e: { code: string }) => e.code);

  it('creates, revokes and refuses to rotate a revoked key, each error with its own code', async () => {
    const { key } = (await callAdminSocket(dir, 'POST', '/keys', { mode: 'sponsored', name: 'ops' })) as { key: { id: string } };
    expect(await callAdminSocket(dir, 'GET', '/keys')).toEqual([expect.objectContaining({ id: key.id, name: 'ops', enabled: true })]);
    await callAdminSocket(dir, 'POST', `/keys/${key.id}/revoke`);
    expect(await failure(callAdminSocket(dir, 'POST', `/keys/${key.id}/rotate`))).toBe('key_revoked');
    expect(await failure(callAdminSocket(dir, 'POST', '/keys/nope/rotate'))).toBe('key_not_found');
  });

  it('answers invalid input 400 and hides the message of an unexpected failure', async () => {
    expect(await failure(callAdminSocket(dir, 'POST', '/keys', { mode: 'free' }))).toBe('invalid_request');
    const res = await admin.inject({ method: 'POST', url: '/keys', payload: { mode: 'sponsored' }, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(200);
    await store.close(); // every store call now fails with a non-operational error
    const broken = await admin.inject({ method: 'GET', url: '/keys' });
    expect(broken.statusCode).toBeGreaterThanOrEqual(500);
    expect(broken.json().message).not.toMatch(/\//); // no path or internal detail
    store = await openEmbeddedStore({ dir: `${dir}/store` });
  });
});
