import { describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startDevnet } from '../../src/devnet/devnet.ts';
import { createKey } from '../../src/keys/manage.ts';
import { startEmbeddedService } from '../../src/roles/embedded.ts';
import { newServiceSecret, tempDir } from '../support/env.ts';
import { apiClient } from '../support/http.ts';

describe('a chain that stops answering', () => {
  it('answers execute with 503 chain_unavailable (nothing signed, safe to retry) and health says degraded', async () => {
    // A devnet of its own: this test kills it.
    const dataDir = tempDir('aw-chain-down-');
    const devnet = await startDevnet({ dataDir, log: () => undefined });
    const service = await startEmbeddedService({
      dataDir,
      chains: devnet.chainConfigs(),
      serviceSecret: newServiceSecret(),
      port: 0,
      admissionRetryMs: 1_500,
    });
    try {
      const { api_key } = await createKey(service.store, { mode: 'sponsored' });
      const api = apiClient(service.url, api_key);
      const body = {
        agent_id: 'patient-agent',
        chain: 'base',
        target_contract: devnet.manifest.chains.find((c) => c.name === 'base')!.testContracts.counter,
        calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
        value: '0',
      };
      const ok = await api.post('/execute', body);
      expect(ok.status).toBe(200);
      expect((await api.waitForTerminal(ok.body.request_id)).status).toBe('confirmed');

      await devnet.stop();
      const res = await api.post('/execute', body);
      // Admission gave up (503 chain_unavailable) rather than leaving the agent to the 20 s decision timeout
      // (which would answer 500 decision_timeout): the answer itself shows which happened.
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('chain_unavailable');
      expect(res.headers.get('retry-after')).toBeTruthy();
      const status = await api.get(`/status/${res.body.request_id}`);
      expect(status.body.status).toBe('failed');
      const record = await service.store.get('ExecutionRequest', res.body.request_id);
      expect(record.status?.userOperation).toBeUndefined(); // nothing was signed, nothing can execute later

      const health = await apiClient(service.url).get('/health');
      expect(health.body.status).toBe('degraded');
    } finally {
      await service.stop();
      await devnet.stop();
    }
  });
});
