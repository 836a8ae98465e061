import { Buffer } from "node:buffer"
import { createHmac, timingSafeEqual } from "node:crypto"
import { WebhookSignatureError } from "./errors.ts"
import type { webhooks } from "./types.ts"

/** The JSON body of one webhook event, as the service documents it. */
type EventBody<Name extends keyof webhooks> = webhooks[Name] extends { post: { requestBody: { content: { "application/json": infer Body } } } } ? Body : never

/** Every event the service sends, told apart by `event`. */
export type WebhookEvent = { [Name in keyof webhooks]: EventBody<Name> }[keyof webhooks]

/** The names of the events the service sends. */
export type WebhookEventName = WebhookEvent["event"]

const SIGNATURE = /^[0-9a-fA-F]{64}$/

/**
 * Whether `signatureHeader` (the `X-Checkout-Signature` header) is the HMAC-SHA256 of the raw body
 * under the webhook signing secret: compared in constant time; either hex case is accepted and
 * anything but 64 hex characters is false. Pass the body exactly as received, before any JSON parse.
 */
export const verifyWebhookSignature = (rawBody: string | Uint8Array, signatureHeader: string | null | undefined, secret: string): boolean => {
  if (typeof signatureHeader !== "string" || !SIGNATURE.test(signatureHeader)) return false
  const expected = createHmac("sha256", secret).update(rawBody).digest()
  return timingSafeEqual(expected, Buffer.from(signatureHeader, "hex"))
}

/** The event of a verified webhook; throws `WebhookSignatureError` when the signature does not match. */
export const parseWebhookEvent = (rawBody: string | Uint8Array, signatureHeader: string | null | undefined, secret: string): WebhookEvent => {
  if (!verifyWebhookSignature(rawBody, signatureHeader, secret)) throw new WebhookSignatureError()
  const text = typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody)
  return JSON.parse(text) as WebhookEvent
}
