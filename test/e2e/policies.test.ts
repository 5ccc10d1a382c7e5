import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';
import { policiesScenario } from '../support/scenarios/policies.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

it('AgentPolicies accept and refuse (403 naming the rule, nothing created), bound by the key, decided by the controller, with a kill switch', { timeout: 180_000 }, async () => {
  await policiesScenario(svc);
  // The decisions metric summarizes what the scenario did: early refusals at the gateway, the controller's own.
  const counts = Object.fromEntries(
    (await svc.metrics.policyDecisions.get()).values.map((v) => [`${v.labels.where}/${v.labels.decision}`, v.value]),
  );
  expect(counts).toMatchObject({
    'gateway/policy_denied': expect.any(Number),
    'gateway/agent_suspended': expect.any(Number),
    'gateway/allowed': expect.any(Number),
    'controller/policy_denied': expect.any(Number),
    'controller/allowed': expect.any(Number),
    'controller/agent_suspended': expect.any(Number),
  });
  // The raced approval and the request waiting for its payment (a reconcile that meets a stale cache may decide twice).
  expect(counts['controller/policy_denied']).toBeGreaterThanOrEqual(1);
  expect(counts['controller/agent_suspended']).toBeGreaterThanOrEqual(1);
  // Three executes, the lender's two actions, the raced approval is the controller's: at least 5 early refusals.
  expect(counts['gateway/policy_denied']).toBeGreaterThanOrEqual(5);
});
