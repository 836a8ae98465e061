import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { DEFAULT_PAYMENT_TIMING, type PaymentTimingInput } from "../domain/Timing.ts"
import { BitcoinAddressPool } from "./BitcoinAddressPool.ts"
import { AssetCode, Network } from "./Networks.ts"
import type { PaymentMethod } from "./PaymentMethod.ts"
import { type DepositSlotRequest, depositSlots } from "./DepositSlots.ts"
import { recordIssued } from "./DerivationLedgerRepo.ts"
import type { MerchantId } from "../domain/Ids.ts"

export interface CheckoutSettings {
  readonly merchantId: MerchantId
  /**
   * The mode whose saved settings these are: false for test settings. A test read answers the live
   * settings (`livemode: true`) until the merchant saves test settings.
   */
  readonly livemode: boolean
  /** False until the merchant saves settings: the values are then the defaults below, and no invoice can be created. */
  readonly configured: boolean
  readonly issuedBy: string | null
  readonly timing: PaymentTimingInput
  readonly methods: ReadonlyArray<PaymentMethod & { readonly enabled: boolean; readonly position: number }>
  /** Shop origins that may frame the merchant's payment pages (EmbedOrigins.ts). */
  readonly embedOrigins: ReadonlyArray<string>
}

export interface MethodInput {
  readonly network: Network
  readonly assetCode: AssetCode
  readonly railType: "wallet_contract" | "address_transfer"
  readonly enabled: boolean
  readonly isDefault: boolean
  readonly recipientAddress: string | null
  readonly xpub: string | null
  /** Raises the key's derivation counter to this index before the save (DerivationLedger.raiseStart); not stored on the method. */
  readonly startIndex?: number | null
}

/** A `payment_methods` row, as `json_build_object` renders it. */
const PaymentMethodRow = Schema.Struct({
  id: Schema.String,
  network: Network,
  assetCode: AssetCode,
  railType: Schema.Literals(["wallet_contract", "address_transfer"]),
  enabled: Schema.Boolean,
  isDefault: Schema.Boolean,
  position: Schema.Int,
  recipientAddress: Schema.NullOr(Schema.String),
  xpub: Schema.NullOr(Schema.String)
})

/** A `checkout_settings` row with the merchant's payment methods in order. */
const CheckoutSettingsRow = Schema.Struct({
  livemode: Schema.Boolean,
  issuedBy: Schema.NullOr(Schema.String),
  timingMode: Schema.Literals(["immediate", "due_date"]),
  expiresAfterMinutes: Schema.NullOr(Schema.Int),
  dueAfterDays: Schema.NullOr(Schema.Int),
  gracePeriodDays: Schema.NullOr(Schema.Int),
  embedOrigins: Schema.Array(Schema.String),
  methods: Schema.Array(PaymentMethodRow)
})
type CheckoutSettingsRow = typeof CheckoutSettingsRow.Type

const NextIndex = Schema.Struct({ nextIndex: Schema.Int })

/** What a new account's settings read as until the merchant saves them: no payment method yet. */
export const defaultCheckoutSettings = (merchantId: MerchantId, livemode = true): CheckoutSettings => ({
  merchantId,
  livemode,
  configured: false,
  issuedBy: null,
  timing: DEFAULT_PAYMENT_TIMING,
  methods: [],
  embedOrigins: []
})

// The save writes the columns of its mode; the others are null.
const timingFromRow = (row: CheckoutSettingsRow): PaymentTimingInput =>
  row.timingMode === "due_date"
    ? { mode: "due_date", dueAfterDays: row.dueAfterDays ?? 0, gracePeriodDays: row.gracePeriodDays ?? 0 }
    : { mode: "immediate", expiresAfterMinutes: row.expiresAfterMinutes ?? 0 }

type SettingsInput = {
  readonly issuedBy: string | null
  readonly timing: PaymentTimingInput
  readonly methods: ReadonlyArray<MethodInput>
  /** Left out: the saved list stays as it is. */
  readonly embedOrigins?: ReadonlyArray<string> | undefined
}

const settingsColumns = (merchantId: MerchantId, livemode: boolean, { issuedBy, timing }: SettingsInput) => ({
  merchant_id: merchantId,
  livemode,
  issued_by: issuedBy,
  timing_mode: timing.mode,
  expires_after_minutes: timing.mode === "immediate" ? timing.expiresAfterMinutes : null,
  due_after_days: timing.mode === "due_date" ? timing.dueAfterDays : null,
  grace_period_days: timing.mode === "due_date" ? timing.gracePeriodDays : null
})

const methodColumns = (merchantId: MerchantId, livemode: boolean, method: MethodInput, position: number) => ({
  id: crypto.randomUUID(),
  merchant_id: merchantId,
  livemode,
  network: method.network,
  asset_code: method.assetCode,
  rail_type: method.railType,
  enabled: method.enabled,
  is_default: method.isDefault,
  position,
  recipient_address: method.recipientAddress,
  xpub: method.xpub
})

/** The settings row and the merchant's payment methods of one mode, in one transaction. */
const writeSettings = (sql: SqlClient.SqlClient) =>
  Effect.fnUntraced(function*(merchantId: MerchantId, livemode: boolean, settings: SettingsInput) {
    yield* sql`INSERT INTO checkout_settings ${sql.insert(settingsColumns(merchantId, livemode, settings))}
      ON CONFLICT (merchant_id, livemode) DO UPDATE SET issued_by = EXCLUDED.issued_by, timing_mode = EXCLUDED.timing_mode,
      expires_after_minutes = EXCLUDED.expires_after_minutes, due_after_days = EXCLUDED.due_after_days,
      grace_period_days = EXCLUDED.grace_period_days, updated_at = now()`
    if (settings.embedOrigins !== undefined) {
      yield* sql`UPDATE checkout_settings SET embed_origins = ${settings.embedOrigins} WHERE merchant_id = ${merchantId} AND livemode = ${livemode}`
    }
    // Methods left out of the new list are removed; invoices keep their own copies of options.
    const kept = settings.methods.map((method) => `${method.network}:${method.assetCode}:${method.railType}`)
    yield* sql`DELETE FROM payment_methods WHERE merchant_id = ${merchantId} AND livemode = ${livemode}
      AND NOT (network || ':' || asset_code || ':' || rail_type = ANY(${kept}))`
    for (const [position, method] of settings.methods.entries()) {
      yield* sql`INSERT INTO payment_methods ${sql.insert(methodColumns(merchantId, livemode, method, position))}
        ON CONFLICT (merchant_id, livemode, network, asset_code, rail_type) DO UPDATE SET enabled = EXCLUDED.enabled,
        is_default = EXCLUDED.is_default, position = EXCLUDED.position,
        recipient_address = EXCLUDED.recipient_address,
        xpub = EXCLUDED.xpub`
    }
  }, sql.withTransaction, Effect.orDie)

export class CheckoutSettingsRepo extends Context.Service<CheckoutSettingsRepo, {
  /**
   * The settings of one mode (`livemode` false: test), or the defaults (`configured: false`) when the
   * merchant has saved none. Until test settings are saved, a test read falls back to the live
   * settings (their `livemode` says so): test invoices use the live methods.
   */
  readonly find: (merchantId: MerchantId, livemode: boolean) => Effect.Effect<CheckoutSettings>
  /** Saves the settings of one mode; the other mode's are untouched. */
  readonly save: (merchantId: MerchantId, livemode: boolean, settings: SettingsInput) => Effect.Effect<void>
  /** The shop origins that may frame this invoice's payment page (its merchant's embedOrigins of its mode, live ones until test ones are saved); none for an unknown invoice. */
  readonly embedOriginsOfInvoice: (invoiceId: string) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Reserves fresh derivation indexes for one invoice's deposit options, counted per extended key:
   * an index is never handed out to two invoices; within the invoice, options on different
   * networks share one and options on the same network never do (DepositSlots).
   */
  readonly reserveIndexes: (methods: ReadonlyArray<DepositSlotRequest>) => Effect.Effect<ReadonlyMap<string, number>>
}>()("Payments/CheckoutSettingsRepo") {
  static readonly layerWithoutDependencies = Layer.effect(
    CheckoutSettingsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const addressPool = yield* BitcoinAddressPool
      const findSettings = SqlSchema.findOneOption({
        Request: Schema.Struct({ merchantId: Schema.String, livemode: Schema.Boolean }),
        Result: CheckoutSettingsRow,
        execute: ({ merchantId, livemode }) =>
          sql`SELECT s.*, COALESCE((SELECT json_agg(json_build_object(
              'id', m.id, 'network', m.network, 'assetCode', m.asset_code, 'railType', m.rail_type, 'enabled', m.enabled,
              'isDefault', m.is_default, 'position', m.position, 'recipientAddress', m.recipient_address, 'xpub', m.xpub)
              ORDER BY m.position, m.id) FROM payment_methods m WHERE m.merchant_id = s.merchant_id AND m.livemode = s.livemode), '[]'::json) AS methods
            FROM checkout_settings s WHERE s.merchant_id = ${merchantId} AND s.livemode IN (${livemode}, true)
            ORDER BY s.livemode = ${livemode} DESC LIMIT 1`
      })
      const advanceCounter = SqlSchema.findOne({
        Request: Schema.Struct({ xpub: Schema.String, count: Schema.Int }),
        Result: NextIndex,
        execute: ({ xpub, count }) =>
          sql`WITH advanced AS (INSERT INTO derivation_counters (xpub, next_index) VALUES (${xpub}, ${count})
              ON CONFLICT (xpub) DO UPDATE SET next_index = derivation_counters.next_index + ${count}
              RETURNING xpub, next_index),
            recorded AS (${recordIssued(sql, "advanced")})
            SELECT next_index::int AS next_index FROM advanced`
      })
      const findEmbedOrigins = SqlSchema.findOneOption({
        Request: Schema.Struct({ invoiceId: Schema.String }),
        Result: Schema.Struct({ embedOrigins: Schema.Array(Schema.String) }),
        execute: ({ invoiceId }) =>
          sql`SELECT s.embed_origins FROM invoices i JOIN checkout_settings s ON s.merchant_id = i.merchant_id AND s.livemode IN (i.livemode, true)
            WHERE i.id = ${invoiceId} ORDER BY s.livemode = i.livemode DESC LIMIT 1`
      })
      const write = writeSettings(sql)
      return {
        find: Effect.fnUntraced(function*(merchantId, livemode) {
          const found = yield* findSettings({ merchantId, livemode })
          if (Option.isNone(found)) return defaultCheckoutSettings(merchantId, livemode)
          const { embedOrigins, issuedBy, methods } = found.value
          return { merchantId, livemode: found.value.livemode, configured: true, issuedBy, timing: timingFromRow(found.value), methods, embedOrigins }
        }, Effect.orDie),
        embedOriginsOfInvoice: (invoiceId) => findEmbedOrigins({ invoiceId }).pipe(Effect.map(Option.match({ onNone: () => [], onSome: (row) => row.embedOrigins })), Effect.orDie),
        save: Effect.fn("CheckoutSettingsRepo.save")(function*(merchantId, livemode, settings) {
          yield* write(merchantId, livemode, settings)
          // Filled after the commit: a refill waits for its turn, which must not happen while this
          // transaction holds a connection (the embedded database has only one).
          for (const method of settings.methods) {
            if (method.network === "bitcoin" && method.enabled && method.xpub !== null) yield* addressPool.refill(method.xpub)
          }
        }),
        reserveIndexes: Effect.fnUntraced(function*(methods) {
          const { counts, offsets } = depositSlots(methods)
          const first = new Map<string, number>()
          for (const [xpub, count] of counts) {
            const { nextIndex } = yield* advanceCounter({ xpub, count })
            first.set(xpub, nextIndex - count)
          }
          return new Map(methods.map((method) => [method.id, first.get(method.xpub)! + offsets.get(method.id)!]))
        }, Effect.orDie)
      }
    })
  )

  static readonly layer = CheckoutSettingsRepo.layerWithoutDependencies.pipe(Layer.provide(BitcoinAddressPool.layer))
}
