import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { webhookEventJsonSchema } from './event.ts';

describe('docs/webhooks.md', () => {
  it('publishes the JSON Schema the code generates', () => {
    const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
    const block = /<!-- webhook-event-schema:begin -->\n```json\n([\s\S]*?)\n```\n<!-- webhook-event-schema:end -->/.exec(doc);
    expect(block, 'the schema block markers').not.toBeNull();
    // After changing the event (or the status record it carries): npm run docs:webhook-schema.
    expect(JSON.parse(block![1]!)).toEqual(webhookEventJsonSchema());
  });
});
