import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { tempDir } from '../../test/support/env.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { callAdminSocket, serveAdminSocket } from './socket.ts';
import { openFileWebhookSecrets, webhookSecretsDir } from '../webhooks/secrets/files.ts';

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
    expect(await failure(callAdminSocket(dir, 'POST', `/keys/${key.id}/mode`, { mode: 'manual' }))).toBe('key_revoked');
  });

  it('sets a key’s payment mode; refuses an unknown mode or key', async () => {
    const { key } = (await callAdminSocket(dir, 'POST', '/keys', { mode: 'manual' })) as { key: { id: string } };
    expect(await callAdminSocket(dir, 'POST', `/keys/${key.id}/mode`, { mode: 'sponsored' })).toMatchObject({ id: key.id, mode: 'sponsored' });
    expect((await store.get('ApiClient', key.id)).spec.paymentMode).toBe('sponsored');
    expect(await failure(callAdminSocket(dir, 'POST', `/keys/${key.id}/mode`, { mode: 'free' }))).toBe('invalid_request');
    expect(await failure(callAdminSocket(dir, 'POST', '/keys/nope/mode', { mode: 'auto' }))).toBe('key_not_found');
  });

  it('creates each key with a webhook secret in the data directory, and rotates it keeping the old one for the overlap', async () => {
    const created = (await callAdminSocket(dir, 'POST', '/keys', { mode: 'sponsored' })) as { webhook_secret: string; key: { id: string } };
    expect(created.webhook_secret).toMatch(/^whsec_/);
    const client = await store.get('ApiClient', created.key.id);
    const first = client.spec.webhookSigning!.current.secretRef;
    const files = openFileWebhookSecrets(webhookSecretsDir(dir));
    expect(await files.read(first)).toBe(created.webhook_secret);
    expect(JSON.stringify(client)).not.toContain(created.webhook_secret.slice(6)); // a reference, never the secret

    const rotated = (await callAdminSocket(dir, 'POST', `/keys/${created.key.id}/rotate-webhook-secret`, { overlapSeconds: 600 })) as {
      webhook_secret: string;
      key: { webhook_previous_secret_valid_until: string };
    };
    expect(rotated.webhook_secret).not.toBe(created.webhook_secret);
    const after = (await store.get('ApiClient', created.key.id)).spec.webhookSigning!;
    expect(after.previous).toMatchObject({ secretRef: first });
    expect(Date.parse(after.previous!.validUntil) - Date.parse(after.current.createdAt)).toBe(600_000);
    expect(await files.read(after.current.secretRef)).toBe(rotated.webhook_secret);
    // The default body: a day of overlap.
    await callAdminSocket(dir, 'POST', `/keys/${created.key.id}/rotate-webhook-secret`);
    const third = (await store.get('ApiClient', created.key.id)).spec.webhookSigning!;
    expect(Date.parse(third.previous!.validUntil) - Date.parse(third.current.createdAt)).toBe(86_400_000);
    expect(await failure(callAdminSocket(dir, 'POST', '/keys/nope/rotate-webhook-secret'))).toBe('key_not_found');
    expect(await failure(callAdminSocket(dir, 'POST', `/keys/${created.key.id}/rotate-webhook-secret`, { overlapSeconds: -1 }))).toBe('invalid_request');
  });

  it('writes policies: PUT applies (create, then update), GET lists and gets, suspend/resume, DELETE; each error with its code', async () => {
    const { key } = (await callAdminSocket(dir, 'POST', '/keys', { mode: 'sponsored' })) as { key: { id: string } };
    const spec = { apiClient: key.id, agents: { match: 'prefix', agentId: 'team-a/' }, rules: [{ name: 'base-only', action: 'accept', chains: ['base'] }] };
    expect(await callAdminSocket(dir, 'PUT', '/policies/team-a', spec)).toMatchObject({ created: true, policy: { name: 'team-a', api_client: key.id, rules: 1 } });
    expect(await callAdminSocket(dir, 'PUT', '/policies/team-a', { ...spec, rules: [] })).toMatchObject({ created: false, policy: { rules: 0 } });
    expect(await callAdminSocket(dir, 'GET', `/policies?client=${key.id}`)).toEqual([expect.objectContaining({ name: 'team-a', suspended: false })]);
    expect(await callAdminSocket(dir, 'GET', '/policies?client=someoneelse')).toEqual([]);
    expect(await callAdminSocket(dir, 'GET', '/policies/team-a')).toEqual({ name: 'team-a', spec: { ...spec, rules: [], suspended: false } });
    expect(await callAdminSocket(dir, 'POST', '/policies/team-a/suspend')).toMatchObject({ suspended: true });
    expect((await store.get('AgentPolicy', 'team-a')).spec.suspended).toBe(true);
    expect(await callAdminSocket(dir, 'POST', '/policies/team-a/resume')).toMatchObject({ suspended: false });

    expect(await failure(callAdminSocket(dir, 'PUT', '/policies/Team_A', spec))).toBe('invalid_policy');
    expect(await failure(callAdminSocket(dir, 'PUT', '/policies/x', { ...spec, apiClient: 'nosuchkey0000000' }))).toBe('unknown_api_client');
    expect(await failure(callAdminSocket(dir, 'PUT', '/policies/x', { ...spec, rules: [{ name: 'r', action: 'accept', function: { signature: 'nope(' } }] }))).toBe('invalid_policy');
    expect(await failure(callAdminSocket(dir, 'PUT', '/policies/x'))).toBe('invalid_policy');
    expect(await failure(callAdminSocket(dir, 'POST', '/policies/x/suspend'))).toBe('policy_not_found');
    const res = await admin.inject({ method: 'PUT', url: '/policies/x', payload: { ...spec, apiClient: 'nosuchkey0000000' }, headers: { 'content-type': 'application/json' } });
    expect([res.statusCode, res.json().error]).toEqual([422, 'unknown_api_client']);

    expect(await callAdminSocket(dir, 'DELETE', '/policies/team-a')).toEqual({ name: 'team-a' });
    expect(await failure(callAdminSocket(dir, 'DELETE', '/policies/team-a'))).toBe('policy_not_found');
    expect(await failure(callAdminSocket(dir, 'GET', '/policies/team-a'))).toBe('policy_not_found');
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
