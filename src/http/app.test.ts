import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { text } from '../api/http/index.ts';
import { createHttpApp, type ErrorAnswers } from './app.ts';
import { HttpError } from './errors.ts';

class Outage extends Error {}

/** An app with one route per way a request can fail. */
async function appWith(errors?: ErrorAnswers) {
  const app = createHttpApp({ ...(errors && { errors }) });
  app.post('/things', { schema: { body: z.object({ name: text('a name') }) } }, async (req) => ({ name: req.body.name }));
  app.get('/refused', async () => {
    throw new HttpError(429, 'rate_limited', 'slow down', { details: { retry_after_seconds: 3 }, headers: { 'retry-after': '3' } });
  });
  app.get('/outage', async () => {
    throw new Outage('db at 10.0.0.7 did not answer');
  });
  app.get('/bug', async () => {
    throw new Error('secret /internal/path');
  });
  await app.ready();
  return app;
}

describe('createHttpApp with the API conventions', () => {
  const operational = (e: unknown) => (e instanceof Outage ? new HttpError(503, 'store_unavailable', 'retry', { headers: { 'retry-after': '1' } }) : undefined);

  it('answers every error as { error, message, ... } with a trace id the body of a 5xx repeats', async () => {
    const app = await appWith({ kind: 'api', operational });
    const ok = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-trace-id']).toMatch(/^[0-9a-f-]{36}$/);

    const refused = await app.inject({ url: '/refused' });
    expect([refused.statusCode, refused.headers['retry-after'], refused.json()]).toEqual([
      429,
      '3',
      { error: 'rate_limited', message: 'slow down', retry_after_seconds: 3 },
    ]);

    const invalid = await app.inject({ method: 'POST', url: '/things', payload: {} });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toEqual({
      error: 'missing_field',
      message: 'name is required',
      field: 'name',
      issues: [{ field: 'name', code: 'missing_field', message: 'name is required' }],
    });

    const outage = await app.inject({ url: '/outage' });
    expect([outage.statusCode, outage.headers['retry-after']]).toEqual([503, '1']);
    expect(outage.json()).toEqual({ error: 'store_unavailable', message: 'retry', trace_id: outage.headers['x-trace-id'] });

    const bug = await app.inject({ url: '/bug' });
    expect(bug.statusCode).toBe(500);
    expect(bug.json()).toEqual({ error: 'internal_error', message: 'internal error', trace_id: bug.headers['x-trace-id'] });
    await app.close();
  });

  it('takes JSON bodies only and answers unknown routes in the same shape', async () => {
    const app = await appWith();
    const text = await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': 'text/plain' }, payload: 'a' });
    expect([text.statusCode, text.json().error]).toEqual([415, 'unsupported_media_type']);
    const missing = await app.inject({ url: '/nope?x=1' });
    expect([missing.statusCode, missing.json()]).toEqual([404, { error: 'not_found', message: 'no route GET /nope' }]);
    // Without a mapping of its own, an app's outage is a 500 like any other unexpected error.
    expect((await app.inject({ url: '/outage' })).statusCode).toBe(500);
    await app.close();
  });
});

describe('createHttpApp with its own error answers', () => {
  it('hands every error to the app’s handler and keeps Fastify’s defaults otherwise', async () => {
    const seen: string[] = [];
    const app = await appWith({
      kind: 'own',
      handler: (error, _request, reply) => {
        seen.push(error.message);
        return reply.code(418).send({ error: 'own', message: 'answered by the app' });
      },
    });
    const bug = await app.inject({ url: '/bug' });
    expect([bug.statusCode, bug.json(), bug.headers['x-trace-id']]).toEqual([418, { error: 'own', message: 'answered by the app' }, undefined]);
    expect(seen).toEqual(['secret /internal/path']);
    expect((await app.inject({ url: '/nope' })).json()).toMatchObject({ error: 'Not Found', statusCode: 404 });
    await app.close();
  });
});
