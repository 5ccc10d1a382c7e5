import { afterAll, beforeAll, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';
import { agentScopeScenario } from '../support/scenarios/agentScope.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

it('an agent-scoped key acts for its agent ids only, on every endpoint that names one; status and cancel follow the scope', { timeout: 120_000 }, () => agentScopeScenario(svc));
