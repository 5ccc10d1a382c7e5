/**
 * Writes the webhook event's JSON Schema (src/webhooks/event.ts) into docs/webhooks.md between its markers, as
 * src/webhooks/docs.test.ts checks it: `npm run docs:webhook-schema` after changing the event or the status record.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { webhookEventJsonSchema } from '../src/webhooks/event.ts';

const path = new URL('../docs/webhooks.md', import.meta.url);
const doc = readFileSync(path, 'utf8');
const block = /(<!-- webhook-event-schema:begin -->\n```json\n)[\s\S]*?(\n```\n<!-- webhook-event-schema:end -->)/;
if (!block.test(doc)) throw new Error('docs/webhooks.md has no webhook-event-schema markers');
writeFileSync(path, doc.replace(block, (_, open: string, close: string) => `${open}${JSON.stringify(webhookEventJsonSchema(), null, 2)}${close}`));
console.log('wrote the webhook event schema into docs/webhooks.md');
