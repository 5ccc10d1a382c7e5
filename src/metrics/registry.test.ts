import { describe, expect, it } from 'vitest';
import { createMetrics } from './registry.ts';
import { parseExposition } from './testing/exposition.ts';

describe('Metrics registry', () => {
  it('gives each instance its own registry: two services in one process count apart', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.webhookDelivered('delivered');
    a.webhookDelivered('delivered');
    a.webhookDelivered('abandoned');
    const pa = parseExposition(await a.scrape());
    const pb = parseExposition(await b.scrape());
    expect(pa.value('agentwallet_webhook_deliveries_total', { result: 'delivered' })).toBe(2);
    expect(pa.value('agentwallet_webhook_deliveries_total', { result: 'abandoned' })).toBe(1);
    expect(pb.find('agentwallet_webhook_deliveries_total')).toEqual([]);
    expect(pb.types.get('agentwallet_webhook_deliveries_total')).toBe('counter');
  });

  it('names every family of ours agentwallet_*, with units and _total as Prometheus conventions want', async () => {
    const m = createMetrics();
    const exposition = parseExposition(await m.scrape());
    const ours = [...exposition.types].filter(([name]) => !name.startsWith('process_') && !name.startsWith('nodejs_'));
    expect(ours.length).toBeGreaterThanOrEqual(25);
    for (const [name, type] of ours) {
      expect(name).toMatch(/^agentwallet_[a-z0-9_]+$/);
      if (type === 'counter') expect(name).toMatch(/_total$/);
      else expect(name).not.toMatch(/_total$/);
      if (/duration|time|wait|handling/.test(name)) expect(name).toMatch(/_seconds$/);
    }
    // prom-client's default process metrics, under their standard names.
    expect(exposition.types.get('process_cpu_seconds_total')).toBe('counter');
    expect(exposition.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(m.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('leaves the default process metrics out on request', async () => {
    const exposition = parseExposition(await createMetrics({ defaultMetrics: false }).scrape());
    expect([...exposition.types.keys()].filter((n) => !n.startsWith('agentwallet_'))).toEqual([]);
  });

  it('sets the leader gauge to 1 and back to 0', async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.setLeader('controller', true);
    expect(parseExposition(await m.scrape()).value('agentwallet_leader', { role: 'controller' })).toBe(1);
    m.setLeader('controller', false);
    expect(parseExposition(await m.scrape()).value('agentwallet_leader', { role: 'controller' })).toBe(0);
  });

  it('counts requests with one source at a time, a series per chain and phase, none once detached', async () => {
    const m = createMetrics({ defaultMetrics: false });
    let confirmed = 3;
    const detach = m.countExecutionRequestsWith((phase, chain) => (phase === 'Confirmed' && chain === 'base' ? confirmed : 0), ['base', 'ethereum']);
    expect(() => m.countExecutionRequestsWith(() => 0, ['base'])).toThrow(/already has a source/);
    let e = parseExposition(await m.scrape());
    expect(e.series('agentwallet_execution_requests')).toBe(16); // 2 chains × 8 phases
    expect(e.value('agentwallet_execution_requests', { phase: 'Confirmed', chain: 'base' })).toBe(3);
    expect(e.value('agentwallet_execution_requests', { phase: 'Pending', chain: 'ethereum' })).toBe(0);
    confirmed = 4; // computed at scrape time
    e = parseExposition(await m.scrape());
    expect(e.value('agentwallet_execution_requests', { phase: 'Confirmed', chain: 'base' })).toBe(4);
    detach();
    expect(parseExposition(await m.scrape()).series('agentwallet_execution_requests')).toBe(0);
    m.countExecutionRequestsWith(() => 1, ['arbitrum'])(); // a new source may attach after the old one left
  });
});
