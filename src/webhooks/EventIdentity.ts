import { createHash } from "node:crypto"

/** What names one webhook event whatever database row carries it: its invoice (and refund), its name, and which occurrence of that name it is. */
export interface EventIdentity {
  readonly merchantId: string
  readonly invoiceId: string
  readonly refundId: string | null
  readonly event: string
  /** 1 for the invoice's first event of this name (and refund), 2 for the second, … */
  readonly occurrence: number
}

/**
 * The delivery id (`X-Checkout-Delivery`) of an event: a UUID (version 8, RFC 9562) hashed from
 * its identity rather than drawn at random. After a restore from a backup, the watchers find the
 * payments made since the backup again and the same transitions write the same events, which
 * then go out under the ids the receiver saw before the restore (issue #56, docs/backups.md).
 */
export const eventDeliveryId = ({ event, invoiceId, merchantId, occurrence, refundId }: EventIdentity): string => {
  const digest = createHash("sha256").update(`${merchantId}/${invoiceId}/${refundId ?? ""}/${event}/${occurrence}`).digest()
  digest[6] = (digest[6]! & 0x0f) | 0x80
  digest[8] = (digest[8]! & 0x3f) | 0x80
  const hex = digest.subarray(0, 16).toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}
