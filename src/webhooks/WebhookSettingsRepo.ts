import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { MerchantId } from "../domain/Ids.ts"
import { WebhookEventName } from "../domain/Statuses.ts"

/**
 * A `webhook_settings` row: the destination, the events switched on, the sealed signing secret. A
 * merchant has one row per mode (live, and test: `livemode` false).
 */
export const WebhookSettingsRow = Schema.Struct({
  merchantId: MerchantId,
  livemode: Schema.Boolean,
  url: Schema.NullOr(Schema.String),
  enabledEvents: Schema.Array(WebhookEventName),
  secretCiphertext: Schema.NullOr(Schema.String)
})
export type WebhookSettingsRow = typeof WebhookSettingsRow.Type

const StoredSettings = WebhookSettingsRow.mapFields(Struct.pick(["url", "enabledEvents", "secretCiphertext"]))
const StoredDestination = WebhookSettingsRow.mapFields(Struct.pick(["merchantId", "livemode", "url", "secretCiphertext"]))
const StoredTarget = WebhookSettingsRow.mapFields(Struct.pick(["merchantId", "livemode", "url", "enabledEvents"]))
const ByMerchantMode = Schema.Struct({ merchantId: Schema.String, livemode: Schema.Boolean })

/** Which settings a read or write is about: a merchant's, of one mode. */
export interface SettingsOwner {
  readonly merchantId: MerchantId
  readonly livemode: boolean
}

/** Persistence of merchants' webhook settings per mode (the secret as stored: sealed). SQL and decode failures are defects here. */
export class WebhookSettingsRepo extends Context.Service<WebhookSettingsRepo, {
  readonly find: (owner: SettingsOwner) => Effect.Effect<Option.Option<typeof StoredSettings.Type>>
  /** The URL and sealed secret of each of `merchantIds`' settings, of both modes. */
  readonly findDestinations: (merchantIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<typeof StoredDestination.Type>>
  /** The URL and enabled events of each of `merchantIds`' settings (both modes) that has a URL (where the outbox fans out to). */
  readonly findTargets: (merchantIds: ReadonlyArray<MerchantId>) => Effect.Effect<ReadonlyArray<typeof StoredTarget.Type>>
  /** Stores the URL and the events, keeping the secret. */
  readonly saveDestination: (owner: SettingsOwner, url: string | null, enabledEvents: ReadonlyArray<WebhookEventName>) => Effect.Effect<void>
  /** Stores a sealed secret; settings not saved yet get no URL and `defaultEvents`. */
  readonly saveSecret: (owner: SettingsOwner, sealed: string, defaultEvents: ReadonlyArray<WebhookEventName>) => Effect.Effect<void>
}>()("Webhooks/WebhookSettingsRepo") {
  static readonly layer = Layer.effect(
    WebhookSettingsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const findSettings = SqlSchema.findOneOption({
        Request: ByMerchantMode,
        Result: StoredSettings,
        execute: ({ merchantId, livemode }) => sql`SELECT url, enabled_events, secret_ciphertext FROM webhook_settings WHERE merchant_id = ${merchantId} AND livemode = ${livemode}`
      })
      const findDestinations = SqlSchema.findAll({
        Request: Schema.Array(Schema.String),
        Result: StoredDestination,
        execute: (merchantIds) => sql`SELECT merchant_id, livemode, url, secret_ciphertext FROM webhook_settings WHERE merchant_id = ANY(${merchantIds}::uuid[])`
      })
      // Merchants without a row or without a URL get no delivery.
      const findTargets = SqlSchema.findAll({
        Request: Schema.Struct({ merchantIds: Schema.Array(MerchantId) }),
        Result: StoredTarget,
        execute: ({ merchantIds }) =>
          sql`SELECT merchant_id, livemode, url, enabled_events FROM webhook_settings
            WHERE merchant_id = ANY(${merchantIds}::uuid[]) AND url IS NOT NULL`
      })
      return {
        find: (owner) => Effect.orDie(findSettings(owner)),
        findDestinations: (merchantIds) => Effect.orDie(findDestinations(merchantIds)),
        findTargets: (merchantIds) => Effect.orDie(findTargets({ merchantIds })),
        saveDestination: ({ merchantId, livemode }, url, enabledEvents) =>
          Effect.orDie(sql`INSERT INTO webhook_settings (merchant_id, livemode, url, enabled_events)
            VALUES (${merchantId}, ${livemode}, ${url}, ${JSON.stringify(enabledEvents)}::jsonb)
            ON CONFLICT (merchant_id, livemode) DO UPDATE SET url = EXCLUDED.url, enabled_events = EXCLUDED.enabled_events, updated_at = now()`),
        saveSecret: ({ merchantId, livemode }, sealed, defaultEvents) =>
          Effect.orDie(sql`INSERT INTO webhook_settings (merchant_id, livemode, url, enabled_events, secret_ciphertext, secret_created_at)
            VALUES (${merchantId}, ${livemode}, NULL, ${JSON.stringify(defaultEvents)}::jsonb, ${sealed}, now())
            ON CONFLICT (merchant_id, livemode) DO UPDATE SET secret_ciphertext = EXCLUDED.secret_ciphertext,
            secret_created_at = now(), updated_at = now()`)
      }
    })
  )
}
