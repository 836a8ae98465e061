import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Secrets } from "../accounts/Secrets.ts"
import { toStringOrNull } from "../db/Values.ts"
import type { WebhookEventName } from "../lifecycle/InvoiceMachine.ts"
import { generateWebhookSecret, openSecret, sealSecret } from "./SecretBox.ts"
import { WEBHOOK_EVENTS } from "./WebhookEvents.ts"

export interface WebhookSettingsRecord {
  readonly url: string | null
  readonly enabledEvents: ReadonlyArray<WebhookEventName>
  readonly hasSecret: boolean
}

type Row = Record<string, unknown>

/** A merchant's webhook URL, enabled events and signing secret (encrypted at rest). */
export class WebhookSettings extends Context.Service<WebhookSettings, {
  readonly get: (merchantId: string) => Effect.Effect<WebhookSettingsRecord>
  readonly save: (merchantId: string, url: string | null, enabledEvents: ReadonlyArray<WebhookEventName>) => Effect.Effect<WebhookSettingsRecord>
  readonly rotateSecret: (merchantId: string) => Effect.Effect<string>
  /** URL, events and the plain secret, for sending. */
  readonly forSending: (merchantId: string) => Effect.Effect<{ url: string | null; enabledEvents: ReadonlyArray<string>; secret: string | null }>
}>()("Webhooks/WebhookSettings") {
  static readonly layer = Layer.effect(
    WebhookSettings,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { encryptionKey } = yield* Secrets
      const load = (merchantId: string) =>
        sql<Row>`SELECT url, enabled_events, secret_ciphertext FROM webhook_settings WHERE merchant_id = ${merchantId}`.pipe(
          Effect.map((rows) => rows[0]),
          Effect.orDie
        )
      const recordOf = (row: Row | undefined): WebhookSettingsRecord => ({
        url: toStringOrNull(row?.url),
        enabledEvents: row === undefined ? WEBHOOK_EVENTS : (row.enabledEvents as Array<WebhookEventName>),
        hasSecret: row?.secretCiphertext !== null && row?.secretCiphertext !== undefined
      })
      return {
        get: (merchantId) => Effect.map(load(merchantId), recordOf),
        save: (merchantId, url, enabledEvents) =>
          Effect.gen(function*() {
            yield* sql`INSERT INTO webhook_settings (merchant_id, url, enabled_events)
              VALUES (${merchantId}, ${url}, ${JSON.stringify(enabledEvents)}::jsonb)
              ON CONFLICT (merchant_id) DO UPDATE SET url = EXCLUDED.url, enabled_events = EXCLUDED.enabled_events, updated_at = now()`
            return recordOf(yield* load(merchantId))
          }).pipe(Effect.orDie),
        rotateSecret: (merchantId) =>
          Effect.gen(function*() {
            const secret = generateWebhookSecret()
            const sealed = sealSecret(secret, encryptionKey)
            yield* sql`INSERT INTO webhook_settings (merchant_id, url, enabled_events, secret_ciphertext, secret_created_at)
              VALUES (${merchantId}, NULL, ${JSON.stringify(WEBHOOK_EVENTS)}::jsonb, ${sealed}, now())
              ON CONFLICT (merchant_id) DO UPDATE SET secret_ciphertext = EXCLUDED.secret_ciphertext,
              secret_created_at = now(), updated_at = now()`
            return secret
          }).pipe(Effect.orDie),
        forSending: (merchantId) =>
          Effect.map(load(merchantId), (row) => ({
            url: toStringOrNull(row?.url),
            enabledEvents: row === undefined ? WEBHOOK_EVENTS : (row.enabledEvents as Array<string>),
            secret: row?.secretCiphertext === null || row?.secretCiphertext === undefined ? null : openSecret(String(row.secretCiphertext), encryptionKey)
          }))
      }
    })
  )
}
