import { it } from 'vitest';
import { useTestService } from '../support/service.ts';
import { killSwitchHeldScenario, killSwitchUnderLoadScenario } from '../support/scenarios/killSwitch.ts';

const svc = useTestService();

it('the kill switch withdraws signed operations waiting in the bundler: agent_suspended, nothing on chain; a carried one finishes; resumed, the nonce is reused', { timeout: 180_000 }, async () => {
  await killSwitchHeldScenario(svc());
});

it('the kill switch under load, asserted by order: confirmed (sent before) or agent_suspended, sent nonces before withdrawn ones', { timeout: 180_000 }, async () => {
  await killSwitchUnderLoadScenario(svc());
});
