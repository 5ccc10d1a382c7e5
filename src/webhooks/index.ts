/**
 * Webhooks (docs/webhooks.md). For receivers: verifyWebhook and the event's schema. For the
 * service: signing, the SSRF checks, the HTTPS transport, the retry schedule and the secret stores.
 */
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookHeaders, type WebhookVerificationErrorCode } from './verify.ts';
export {
  buildWebhookEvent,
  eventTypeOf,
  webhookEventJsonSchema,
  WebhookEventSchema,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENT_VERSION,
  type WebhookEvent,
  type WebhookEventType,
} from './event.ts';
export { owedEvents, transitionEventType, webhookEventId, withTransitionEvent } from './eventLog.ts';
export { signWebhook, type WebhookMessage, type WebhookSignatureHeaders } from './sign.ts';
export { generateWebhookSecret, webhookSigningKey, WebhookSecretError, WEBHOOK_SECRET_PREFIX } from './secret.ts';
export { createCallbackGuard, EgressRefusedError, resolveAllowed, systemResolver, type CallbackGuard, type EgressPolicy, type Resolver } from '../lib/egress/egress.ts';
export { blockedCategory, type BlockedCategory } from '../lib/egress/addresses.ts';
export { createHttpsTransport, FAILURE_CAUSES, type AttemptResult, type FailureCause, type WebhookTransport } from './deliver.ts';
export { DEFAULT_RETRY_SCHEDULE_SECONDS, parseRetryAfter, retryDelayMs } from './schedule.ts';
export { DEFAULT_WEBHOOK_SETTINGS, WebhookSettingsSchema, type WebhookSettings } from './settings.ts';
export type { WebhookSecretStore } from './secrets/types.ts';
export { openFileWebhookSecrets, webhookSecretsDir } from './secrets/files.ts';
