/**
 * USD rules in the cluster layout: the controller (its own process) asks a chain worker process for the outflows over
 * gRPC, values them with the devnet's feeds read through that worker, and refuses over the limit and an unpriced
 * token; the gateway's dry-run does the same. The scenario of test/support/scenarios/policyUsd.ts.
 */
import { afterAll, beforeAll, it } from 'vitest';
import { policyUsdScenario } from '../support/scenarios/policyUsd.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

it('a USD rule through the API server and the role processes: 403 over the limit, executed under it, an unpriced token refused', { timeout: 180_000 }, () =>
  policyUsdScenario(cluster));
