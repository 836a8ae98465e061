import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { WebhookSignatureError } from "./errors.ts"
import type { webhooks } from "./types.ts"

/** The JSON body of one webhook event, as the service documents it. */
type EventBody<Name extends keyof webhooks> = webhooks[Name] extends { post: { requestBody: { content: { "application/json": infer Body } } } } ? Body : never

/** Every event the service sends, told apart by `event`. */
export type WebhookEvent = { [Name in keyof webhooks]: EventBody<Name> }[keyof webhooks]

/** The names of the events the service sends. */
export type WebhookEventName = WebhookEvent["event"]

const SIGNATURE = /^[0-9a-fA-F]{64}$/
const utf8 = (text: string | Uint8Array) => typeof text === "string" ? new TextEncoder().encode(text) : text

/** Whether the digest equals the hex signature, looking at every byte whatever differs (no early exit). */
const equalsInConstantTime = (digest: Uint8Array, hex: string): boolean => {
  let difference = 0
  for (let index = 0; index < digest.length; index++) difference |= digest[index] ^ parseInt(hex.slice(index * 2, index * 2 + 2), 16)
  return difference === 0
}

/**
 * Whether `signatureHeader` (the `X-Checkout-Signature` header) is the HMAC-SHA256 of the raw body
 * under the webhook signing secret: compared in constant time; either hex case is accepted and
 * anything but 64 hex characters is false. Pass the body exactly as received, before any JSON parse.
 * The HMAC is @noble/hashes', bundled into the package: synchronous, and the same on every runtime
 * (no `node:crypto`, no Web Crypto needed).
 */
export const verifyWebhookSignature = (rawBody: string | Uint8Array, signatureHeader: string | null | undefined, secret: string): boolean => {
  if (typeof signatureHeader !== "string" || !SIGNATURE.test(signatureHeader)) return false
  return equalsInConstantTime(hmac(sha256, utf8(secret), utf8(rawBody)), signatureHeader)
}

/**
 * The event of a verified webhook; throws `WebhookSignatureError` when the signature does not match.
 * Its `livemode` is false for a test invoice's event (sent only to the test webhook URL, signed with
 * the test secret): an endpoint that takes both modes checks it before acting.
 */
export const parseWebhookEvent = (rawBody: string | Uint8Array, signatureHeader: string | null | undefined, secret: string): WebhookEvent => {
  if (!verifyWebhookSignature(rawBody, signatureHeader, secret)) throw new WebhookSignatureError()
  const text = typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody)
  return JSON.parse(text) as WebhookEvent
}
