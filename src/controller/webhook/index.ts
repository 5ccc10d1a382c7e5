export { startWebhookController, webhookIndexers, WEBHOOK_BACKLOG_INDEX, type WebhookController, type WebhookControllerOptions } from './controller.ts';
export { afterAttempt, claimAttempt, planDelivery, type DeliveryPlan } from './delivery.ts';
