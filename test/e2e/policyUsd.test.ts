import { it } from 'vitest';
import { useTestService } from '../support/service.ts';
import { policyUsdScenario } from '../support/scenarios/policyUsd.ts';

const svc = useTestService();

it('a USD rule refuses a transfer over its limit (403 naming the rule and the figures), accepts one under it, and fails closed on an unpriced token', { timeout: 180_000 }, async () => {
  await policyUsdScenario(svc());
});
