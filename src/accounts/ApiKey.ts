import { Schema, Struct } from "effect"
import { rowOf } from "../db/Columns.ts"
import { NullableDate } from "../domain/Timestamps.ts"
import { ApiKeyId, MerchantId } from "../domain/Ids.ts"

/** How many API keys an account may have active at once, in each mode. */
export const MAX_ACTIVE_API_KEYS = 3

/** A live key's invoices are real; a test key's are test invoices (livemode false), never mixed with live ones. */
export const ApiKeyMode = Schema.Literals(["live", "test"])
export type ApiKeyMode = typeof ApiKeyMode.Type

/** A merchant's checkout API key as stored: only the SHA-256 hash of the raw key is kept. */
export const ApiKey = Schema.Struct({
  id: ApiKeyId,
  merchantId: MerchantId,
  keyHash: Schema.String,
  keyPrefix: Schema.String,
  label: Schema.String,
  mode: ApiKeyMode,
  createdAt: Schema.Date,
  revokedAt: NullableDate
})
export type ApiKey = typeof ApiKey.Type

/** An `api_keys` row as the driver returns it (timestamps as Date or ISO text). */
export const ApiKeyRow = rowOf(ApiKey)

/** What the merchant is shown of a key: never its hash. */
export const ApiKeySummary = ApiKey.mapFields(Struct.pick(["id", "keyPrefix", "label", "mode", "createdAt"]))
export type ApiKeySummary = typeof ApiKeySummary.Type

export const ApiKeySummaryRow = rowOf(ApiKeySummary)
