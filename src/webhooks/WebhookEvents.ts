import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from "../domain/Statuses.ts"

/** Every event a merchant can subscribe to: the lifecycle's webhook events. */
export const WEBHOOK_EVENTS: ReadonlyArray<WebhookEventName> = WEBHOOK_EVENT_NAMES

/** Retry delays after the 1st, 2nd and 3rd failed attempt; a 4th failure is final. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [60_000, 5 * 60_000, 15 * 60_000]
