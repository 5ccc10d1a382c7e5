/**
 * The kill switch on signed operations in the cluster layout: the controller (its own process, reading the API
 * server) asks the chain worker processes over gRPC to withdraw what their bundlers hold (WithdrawOperation). The
 * main path of test/support/scenarios/killSwitch.ts (the test under load runs embedded: test/e2e/killSwitch.test.ts).
 */
import { afterAll, beforeAll, it } from 'vitest';
import { killSwitchHeldScenario } from '../support/scenarios/killSwitch.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

it('withdraws signed operations waiting in a worker process’s bundler: agent_suspended, nothing on chain; resumed, the nonce is reused', { timeout: 180_000 }, () =>
  killSwitchHeldScenario(cluster));

