import { z } from 'zod';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, validateSchedule } from './schedule.ts';

/**
 * The webhook sender's settings: the `webhooks` section of the cluster config file, and the embedded service's
 * `webhooks` option. Defaults: the Standard Webhooks schedule (≈ 75 h), 15 s per attempt, 64 attempts at once,
 * 4 per endpoint and 8 per API client.
 */
export const WebhookSettingsSchema = z
  .object({
    /** Delays before the 2nd, 3rd, … attempt, in seconds; attempts in all = delays + 1. */
    retryScheduleSeconds: z
      .array(z.number().positive())
      .superRefine((s, ctx) => {
        const problem = validateSchedule(s);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default([...DEFAULT_RETRY_SCHEDULE_SECONDS]),
    /** Deadline of one attempt, from its start (waiting for a socket included) to the response's headers. */
    attemptTimeoutMs: z.number().int().positive().max(120_000).default(15_000),
    /** Attempts in flight at once, in total (the webhook controller's workers). */
    maxConcurrency: z.number().int().positive().max(1_000).default(64),
    /** Attempts in flight at once to one endpoint (scheme, host and port). */
    maxConcurrencyPerEndpoint: z.number().int().positive().max(100).default(4),
    /** Attempts in flight at once of one API client, whatever endpoints its callback URLs name. */
    maxConcurrencyPerClient: z.number().int().positive().max(1_000).default(8),
    /**
     * Development only: deliver to loopback addresses (a receiver on the same machine). Every other private,
     * link-local or metadata address stays refused.
     */
    allowLoopback: z.boolean().default(false),
  })
  .strict();
export type WebhookSettings = z.infer<typeof WebhookSettingsSchema>;
export type WebhookSettingsInput = z.input<typeof WebhookSettingsSchema>;

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = WebhookSettingsSchema.parse({});
