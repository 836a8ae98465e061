import { Context, Data, Effect, Layer, Option, Result } from "effect"
import { Secrets } from "../accounts/Secrets.ts"
import { AppConfig } from "../config/AppConfig.ts"
import type { WebhookEventName } from "../domain/Statuses.ts"
import { urlProblem } from "./Destination.ts"
import { generateWebhookSecret, openSecret, sealSecret } from "./SecretBox.ts"
import { SELECTABLE_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from "./WebhookEvents.ts"
import { type WebhookSettingsRow, WebhookSettingsRepo } from "./WebhookSettingsRepo.ts"
import type { MerchantId } from "../domain/Ids.ts"

export { WebhookSettingsRow } from "./WebhookSettingsRepo.ts"

export interface WebhookSettingsRecord {
  readonly url: string | null
  readonly enabledEvents: ReadonlyArray<WebhookEventName>
  readonly hasSecret: boolean
}

/** The URL breaks a save-time rule (HTTPS, no credentials or fragment, no private address literal). */
export class InvalidWebhookUrl extends Data.TaggedError("InvalidWebhookUrl")<{ readonly reason: string }> {}

/** The stored secret no longer opens, e.g. after CHECKOUT_ENCRYPTION_KEY changed. */
export class SecretUnreadable extends Data.TaggedError("SecretUnreadable")<{ readonly reason: string }> {}

/** Where an attempt sends: the URL configured now (null: none) and the plain signing secret (null: none created). */
export interface WebhookDestination {
  readonly url: string | null
  readonly secret: string | null
}

const NO_DESTINATION: Result.Result<WebhookDestination, SecretUnreadable> = Result.succeed({ url: null, secret: null })

/** The key of a merchant's settings of one mode in `destinations`' map. */
export const destinationKey = (merchantId: MerchantId, livemode: boolean) => `${merchantId}:${livemode ? "live" : "test"}`

/**
 * A merchant's webhook URL, enabled events and signing secret (encrypted at rest), once per mode:
 * `livemode` false names the test settings (test invoices' events go there only, signed with the
 * test secret); it defaults to true, the live settings.
 */
export class WebhookSettings extends Context.Service<WebhookSettings, {
  readonly get: (merchantId: MerchantId, livemode?: boolean) => Effect.Effect<WebhookSettingsRecord>
  /** Checks and stores the URL (null: no webhooks) and the events, in the canonical order. */
  readonly save: (
    merchantId: MerchantId,
    url: string | null,
    enabledEvents: ReadonlyArray<WebhookEventName>,
    livemode?: boolean
  ) => Effect.Effect<WebhookSettingsRecord, InvalidWebhookUrl>
  /** Creates or replaces the signing secret and returns it: the only time it is shown. */
  readonly rotateSecret: (merchantId: MerchantId, livemode?: boolean) => Effect.Effect<string>
  /**
   * Where and how an attempt sends now: the URL configured at this moment (null: none) and the
   * plain signing secret (null when none was created). Read at every attempt, so that retries
   * follow a changed URL.
   */
  readonly destination: (merchantId: MerchantId, livemode?: boolean) => Effect.Effect<WebhookDestination, SecretUnreadable>
  /**
   * The destinations of several merchants, both modes, in one read (the dispatcher's batch of
   * attempts), keyed by `destinationKey`; settings not saved have none (no URL, no secret).
   */
  readonly destinations: (merchantIds: ReadonlyArray<MerchantId>) => Effect.Effect<ReadonlyMap<string, Result.Result<WebhookDestination, SecretUnreadable>>>
}>()("Webhooks/WebhookSettings") {
  static readonly layer = Layer.effect(
    WebhookSettings,
    Effect.gen(function*() {
      const repo = yield* WebhookSettingsRepo
      const { encryptionKey } = yield* Secrets
      const { webhookAllowLoopback } = yield* AppConfig
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
      // No row yet: the defaults (no URL, every event, no secret).
      const load = (merchantId: MerchantId, livemode: boolean) => Effect.map(repo.find({ merchantId, livemode }), Option.getOrUndefined)
      const recordOf = (row: Omit<WebhookSettingsRow, "merchantId" | "livemode"> | undefined): WebhookSettingsRecord => ({
        url: row?.url ?? null,
        enabledEvents: row === undefined ? WEBHOOK_EVENTS : row.enabledEvents,
        hasSecret: row !== undefined && row.secretCiphertext !== null
      })
      return {
        get: Effect.fn("WebhookSettings.get")(function*(merchantId, livemode = true) {
          return recordOf(yield* load(merchantId, livemode))
        }),
        save: Effect.fn("WebhookSettings.save")(function*(merchantId, url, enabledEvents, livemode = true) {
          const problem = url === null ? undefined : urlProblem(url, webhookAllowLoopback)
          if (problem !== undefined) return yield* new InvalidWebhookUrl({ reason: problem })
          const events = SELECTABLE_WEBHOOK_EVENTS.filter((event) => enabledEvents.includes(event))
          yield* repo.saveDestination({ merchantId, livemode }, url, events)
          return recordOf(yield* load(merchantId, livemode))
        }),
        rotateSecret: Effect.fn("WebhookSettings.rotateSecret")(function*(merchantId, livemode = true) {
          const secret = generateWebhookSecret()
          const sealed = sealSecret(secret, encryptionKey)
          yield* repo.saveSecret({ merchantId, livemode }, sealed, WEBHOOK_EVENTS)
          return secret
        }),
        destination: Effect.fn("WebhookSettings.destination")(function*(merchantId, livemode = true) {
          return yield* Effect.fromResult(open(yield* load(merchantId, livemode)))
        }),
        destinations: (merchantIds) =>
          merchantIds.length === 0 ? Effect.succeed(new Map()) : repo.findDestinations(merchantIds).pipe(
            Effect.map((rows) => {
              const found = new Map(rows.map((row) => [destinationKey(row.merchantId, row.livemode), open(row)]))
              return new Map(merchantIds.flatMap((merchantId) =>
                [true, false].map((livemode) => {
                  const key = destinationKey(merchantId, livemode)
                  return [key, found.get(key) ?? NO_DESTINATION] as const
                })
              ))
            })
          )
      }
    })
  ).pipe(Layer.provide([WebhookSettingsRepo.layer, Secrets.layer]))
}
