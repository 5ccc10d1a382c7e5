import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/env.ts';
import { openFileWebhookSecrets, webhookSecretsDir } from './files.ts';

describe('file webhook secrets (embedded mode)', () => {
  it('keeps each secret in its own file of <data-dir>/webhook-secrets, readable by the owner only', async () => {
    const dataDir = tempDir('aw-secrets-');
    const secrets = openFileWebhookSecrets(webhookSecretsDir(dataDir));
    const ref = await secrets.create('c0ffee0123456789', 'whsec_AAAA');
    expect(ref).toMatch(/^whsec-c0ffee0123456789-[0-9a-f]{16}$/);
    expect(await secrets.read(ref)).toBe('whsec_AAAA');
    const dir = join(dataDir, 'webhook-secrets');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, ref)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual([ref]); // no temporary file left behind
    const second = await secrets.create('c0ffee0123456789', 'whsec_BBBB');
    expect(second).not.toBe(ref);
    expect(await secrets.read(ref)).toBe('whsec_AAAA'); // never overwritten
  });

  it('reads nothing outside its directory, and nothing for an unknown reference', async () => {
    const secrets = openFileWebhookSecrets(webhookSecretsDir(tempDir('aw-secrets-')));
    expect(await secrets.read('../service-secret')).toBeUndefined();
    expect(await secrets.read('whsec-c0ffee0123456789-0000000000000000')).toBeUndefined();
  });
});
