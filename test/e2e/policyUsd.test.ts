import { it } from 'vitest';
import { useTestService } from '../support/service.ts';
import { policyUsdAtSigningScenario, policyUsdScenario } from '../support/scenarios/policyUsd.ts';

const svc = useTestService();

it('a USD rule refuses a transfer over its limit (403 naming the rule and the figures), accepts one under it, and fails closed on an unpriced token', { timeout: 180_000 }, async () => {
  await policyUsdScenario(svc());
});

it('a USD rule added while a request waits for its payment refuses it at signing, valued then (nothing executed, the payment a credit)', { timeout: 180_000 }, async () => {
  await policyUsdAtSigningScenario(svc());
});
