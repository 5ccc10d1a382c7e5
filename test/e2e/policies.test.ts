import { it } from 'vitest';
import { useTestService } from '../support/service.ts';
import { policiesScenario } from '../support/scenarios/policies.ts';

const svc = useTestService();

it('AgentPolicies accept and refuse (403 naming the rule, nothing created), bound by the key, decided by the controller, with a kill switch', { timeout: 180_000 }, () => policiesScenario(svc()));
