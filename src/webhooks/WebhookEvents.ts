import { REFUND_WEBHOOK_EVENT_NAMES, WEBHOOK_EVENT_NAMES, type WebhookEventName } from "../domain/Statuses.ts"

/** The events a merchant without saved settings receives: the lifecycle's webhook events (the spec's nine). */
export const WEBHOOK_EVENTS: ReadonlyArray<WebhookEventName> = WEBHOOK_EVENT_NAMES

/** Every event a merchant can subscribe to: the lifecycle's and, opt-in, the refunds' (docs/refunds.md). */
export const SELECTABLE_WEBHOOK_EVENTS = [...WEBHOOK_EVENT_NAMES, ...REFUND_WEBHOOK_EVENT_NAMES] as const

/** Retry delays after the 1st, 2nd and 3rd failed attempt; a 4th failure is final. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [60_000, 5 * 60_000, 15 * 60_000]
