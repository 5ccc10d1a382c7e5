import { describe, expect, it } from 'vitest';
import type { ExecutionRequest, ExecutionRequestStatus } from '../api/v1alpha1/index.ts';
import { executionRequest } from '../gateway/testing/harness.ts';
import { buildWebhookEvent, WebhookEventSchema } from './event.ts';
import { owedEvents, transitionEventType, webhookEventId, withTransitionEvent } from './eventLog.ts';

const T1 = '2030-01-01T00:00:01.000Z';
const T2 = '2030-01-01T00:00:02.000Z';
const withCallback = (status: ExecutionRequestStatus): ExecutionRequest => ({
  ...executionRequest('req-e', 'client-1', { callbackUrl: 'https://agent.example/hook' }),
  status,
});

describe('the events a request owes', () => {
  it('a transition owes an event when it enters a terminal phase or leaves one', () => {
    expect(transitionEventType('Broadcasting', 'Confirmed')).toBe('execution.confirmed');
    expect(transitionEventType(undefined, 'Failed')).toBe('execution.failed');
    expect(transitionEventType('Confirmed', 'Broadcasting')).toBe('execution.inclusion_lost');
    expect(transitionEventType('Reverted', 'Broadcasting')).toBe('execution.inclusion_lost');
    expect(transitionEventType('Confirmed', 'Failed')).toBe('execution.failed');
    expect(transitionEventType('Confirmed', 'Reverted')).toBe('execution.reverted');
    expect(transitionEventType('Queued', 'Broadcasting')).toBeUndefined();
    expect(transitionEventType('Confirmed', 'Confirmed')).toBeUndefined();
  });

  it('ids: the first keeps evt_<request_id>, later ones are numbered', () => {
    expect([0, 1, 2].map((i) => webhookEventId('req-e', i))).toEqual(['evt_req-e', 'evt_req-e_2', 'evt_req-e_3']);
  });

  it('records the event with its frozen body in the same status, and none without a callback URL', () => {
    const broadcasting = withCallback({ phase: 'Broadcasting' });
    const confirmed = withTransitionEvent(broadcasting, { phase: 'Confirmed', txHash: `0x${'aa'.repeat(32)}`, completionTime: T1 });
    expect(confirmed.webhookEvents).toHaveLength(1);
    const [e] = confirmed.webhookEvents!;
    expect(e).toMatchObject({ id: 'evt_req-e', event: 'execution.confirmed', time: T1, attempts: 0 });
    expect(e!.state).toBeUndefined();
    expect(WebhookEventSchema.parse(JSON.parse(e!.body))).toMatchObject({ id: 'evt_req-e', timestamp: T1, data: { status: 'confirmed' } });

    const lost = withTransitionEvent({ ...broadcasting, status: confirmed }, { ...confirmed, phase: 'Broadcasting', txHash: undefined, completionTime: undefined });
    expect(lost.webhookEvents!.map((x) => [x.id, x.event])).toEqual([
      ['evt_req-e', 'execution.confirmed'],
      ['evt_req-e_2', 'execution.inclusion_lost'],
    ]);
    expect(lost.webhookEvents![0]).toBe(e); // the earlier event is kept as it was, bytes and delivery
    expect(JSON.parse(lost.webhookEvents![1]!.body).data).toMatchObject({ status: 'broadcasting', tx_hash: null });

    const plain = { ...broadcasting, spec: { ...broadcasting.spec, callbackUrl: undefined } };
    expect(withTransitionEvent(plain, { phase: 'Confirmed', completionTime: T1 }).webhookEvents).toBeUndefined();
  });

  it('a request stored with the old status.webhook owes it as its first event (same id, the body its attempts sent), and keeps it first', () => {
    const old = withCallback({
      phase: 'Confirmed',
      txHash: `0x${'aa'.repeat(32)}`,
      completionTime: T1,
      webhook: { id: 'evt_req-e', event: 'execution.confirmed', state: 'Retrying', attempts: 2, nextAttemptTime: T2 },
    });
    expect(owedEvents(old)).toEqual([
      { id: 'evt_req-e', event: 'execution.confirmed', state: 'Retrying', attempts: 2, nextAttemptTime: T2, time: T1, body: buildWebhookEvent(old).body },
    ]);
    const lost = withTransitionEvent(old, { ...old.status, phase: 'Broadcasting', txHash: undefined, completionTime: undefined });
    expect(lost.webhook).toBeUndefined();
    expect(lost.webhookEvents!.map((x) => [x.id, x.state])).toEqual([
      ['evt_req-e', 'Retrying'],
      ['evt_req-e_2', undefined],
    ]);
    expect(owedEvents(withCallback({ phase: 'Broadcasting' }))).toEqual([]);
  });
});
