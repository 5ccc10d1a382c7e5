import { it } from 'vitest';
import { budgetsScenario } from '../support/scenarios/budgets.ts';
import { useTestService } from '../support/service.ts';

const svc = useTestService();

it('budgets: 50 executes at once against a budget that fits 10 (9 or 10 broadcast, the rest 403 naming it); the spend recorded is the receipts’ sum', { timeout: 240_000 }, () =>
  budgetsScenario(svc()));
