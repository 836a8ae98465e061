import { Context, Data, Effect, Layer, Option, Result, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Secrets } from "../accounts/Secrets.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { MerchantId } from "../domain/Ids.ts"
import { WebhookEventName } from "../domain/Statuses.ts"
import { urlProblem } from "./Destination.ts"
import { generateWebhookSecret, openSecret, sealSecret } from "./SecretBox.ts"
import { WEBHOOK_EVENTS } from "./WebhookEvents.ts"

export interface WebhookSettingsRecord {
  readonly url: string | null
  readonly enabledEvents: ReadonlyArray<WebhookEventName>
  readonly hasSecret: boolean
}

/** The URL breaks a save-time rule (HTTPS, no credentials or fragment, no private address literal). */
export class InvalidWebhookUrl extends Data.TaggedError("InvalidWebhookUrl")<{ readonly reason: string }> {}

/** The stored secret no longer opens, e.g. after CHECKOUT_ENCRYPTION_KEY changed. */
export class SecretUnreadable extends Data.TaggedError("SecretUnreadable")<{ readonly reason: string }> {}

/** A `webhook_settings` row: the destination, the events switched on, the sealed signing secret. */
export const WebhookSettingsRow = Schema.Struct({
  merchantId: MerchantId,
  url: Schema.NullOr(Schema.String),
  enabledEvents: Schema.Array(WebhookEventName),
  secretCiphertext: Schema.NullOr(Schema.String)
})
type WebhookSettingsRow = typeof WebhookSettingsRow.Type

/** Where an attempt sends: the URL configured now (null: none) and the plain signing secret (null: none created). */
export interface WebhookDestination {
  readonly url: string | null
  readonly secret: string | null
}

const NO_DESTINATION: Result.Result<WebhookDestination, SecretUnreadable> = Result.succeed({ url: null, secret: null })

/** A merchant's webhook URL, enabled events and signing secret (encrypted at rest). */
export class WebhookSettings extends Context.Service<WebhookSettings, {
  readonly get: (merchantId: string) => Effect.Effect<WebhookSettingsRecord>
  /** Checks and stores the URL (null: no webhooks) and the events, in the canonical order. */
  readonly save: (
    merchantId: string,
    url: string | null,
    enabledEvents: ReadonlyArray<WebhookEventName>
  ) => Effect.Effect<WebhookSettingsRecord, InvalidWebhookUrl>
  /** Creates or replaces the signing secret and returns it: the only time it is shown. */
  readonly rotateSecret: (merchantId: string) => Effect.Effect<string>
  /**
   * Where and how an attempt sends now: the URL configured at this moment (null: none) and the
   * plain signing secret (null when none was created). Read at every attempt, so that retries
   * follow a changed URL.
   */
  readonly destination: (merchantId: string) => Effect.Effect<WebhookDestination, SecretUnreadable>
  /**
   * The destinations of several merchants in one read (the dispatcher's batch of attempts); a
   * merchant without settings has none (no URL, no secret).
   */
  readonly destinations: (merchantIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Result.Result<WebhookDestination, SecretUnreadable>>>
}>()("Webhooks/WebhookSettings") {
  static readonly layer = Layer.effect(
    WebhookSettings,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { encryptionKey } = yield* Secrets
      const { webhookAllowLoopback } = yield* AppConfig
      const findSettings = SqlSchema.findOneOption({
        Request: Schema.Struct({ merchantId: Schema.String }),
        Result: WebhookSettingsRow.mapFields(Struct.pick(["url", "enabledEvents", "secretCiphertext"])),
        execute: ({ merchantId }) => sql`SELECT url, enabled_events, secret_ciphertext FROM webhook_settings WHERE merchant_id = ${merchantId}`
      })
      const findDestinations = SqlSchema.findAll({
        Request: Schema.Array(Schema.String),
        Result: WebhookSettingsRow.mapFields(Struct.pick(["merchantId", "url", "secretCiphertext"])),
        execute: (merchantIds) => sql`SELECT merchant_id, url, secret_ciphertext FROM webhook_settings WHERE merchant_id = ANY(${merchantIds}::uuid[])`
      })
      const open = (row: { readonly url: string | null; readonly secretCiphertext: string | null } | undefined): Result.Result<WebhookDestination, SecretUnreadable> => {
        const url = row?.url ?? null
        const sealed = row?.secretCiphertext ?? null
        if (sealed === null) return Result.succeed({ url, secret: null })
        try {
          return Result.succeed({ url, secret: openSecret(sealed, encryptionKey) })
        } catch {
          return Result.fail(new SecretUnreadable({ reason: "the signing secret cannot be decrypted with the configured encryption key" }))
        }
      }
      const load = (merchantId: string) => findSettings({ merchantId }).pipe(Effect.map(Option.getOrUndefined), Effect.orDie)
      const recordOf = (row: Omit<WebhookSettingsRow, "merchantId"> | undefined): WebhookSettingsRecord => ({
        url: row?.url ?? null,
        enabledEvents: row === undefined ? WEBHOOK_EVENTS : row.enabledEvents,
        hasSecret: row !== undefined && row.secretCiphertext !== null
      })
      return {
        get: Effect.fn("WebhookSettings.get")(function*(merchantId) {
          return recordOf(yield* load(merchantId))
        }),
        save: Effect.fn("WebhookSettings.save")(function*(merchantId, url, enabledEvents) {
          const problem = url === null ? undefined : urlProblem(url, webhookAllowLoopback)
          if (problem !== undefined) return yield* new InvalidWebhookUrl({ reason: problem })
          const events = WEBHOOK_EVENTS.filter((event) => enabledEvents.includes(event))
          yield* sql`INSERT INTO webhook_settings (merchant_id, url, enabled_events)
            VALUES (${merchantId}, ${url}, ${JSON.stringify(events)}::jsonb)
            ON CONFLICT (merchant_id) DO UPDATE SET url = EXCLUDED.url, enabled_events = EXCLUDED.enabled_events, updated_at = now()`
            .pipe(Effect.orDie)
          return recordOf(yield* load(merchantId))
        }),
        rotateSecret: Effect.fn("WebhookSettings.rotateSecret")(function*(merchantId) {
          const secret = generateWebhookSecret()
          const sealed = sealSecret(secret, encryptionKey)
          yield* sql`INSERT INTO webhook_settings (merchant_id, url, enabled_events, secret_ciphertext, secret_created_at)
            VALUES (${merchantId}, NULL, ${JSON.stringify(WEBHOOK_EVENTS)}::jsonb, ${sealed}, now())
            ON CONFLICT (merchant_id) DO UPDATE SET secret_ciphertext = EXCLUDED.secret_ciphertext,
            secret_created_at = now(), updated_at = now()`.pipe(Effect.orDie)
          return secret
        }),
        destination: Effect.fn("WebhookSettings.destination")(function*(merchantId) {
          return yield* Effect.fromResult(open(yield* load(merchantId)))
        }),
        destinations: (merchantIds) =>
          merchantIds.length === 0 ? Effect.succeed(new Map()) : findDestinations(merchantIds).pipe(
            Effect.map((rows) => {
              const found = new Map(rows.map((row) => [row.merchantId as string, open(row)]))
              return new Map(merchantIds.map((merchantId) => [merchantId, found.get(merchantId) ?? NO_DESTINATION]))
            }),
            Effect.orDie
          )
      }
    })
  )
}
