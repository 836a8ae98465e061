import { describe, expect, it } from "@effect/vitest"
import { HDKey } from "@scure/bip32"
import { Effect, Exit, Layer, Logger } from "effect"
import { SqlClient } from "effect/sql"
import { evmDepositAddress } from "../../src/payments/Derivation.ts"
import { DerivationLedger } from "../../src/payments/DerivationLedger.ts"
import { freshZpub, SuiteMerchant, suiteOptions, testApp } from "../support/TestApp.ts"
import type { OptionJson } from "../support/Answers.ts"
import type { JsonBody } from "../support/Json.ts"

// Issue #56, item 3: a derivation counter behind what this database issued is refused, and a key
// saved into a database that never derived from it is named in a warning (answer, GET and log).

const freshEvmXpub = () => HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32))).derive("m/44'/60'/0'").publicExtendedKey

const evmMethod = (xpub: string, startIndex?: number) => ({
  network: "arbitrum",
  assetCode: "USDC",
  railType: "address_transfer",
  xpub,
  isDefault: true,
  ...(startIndex === undefined ? {} : { startIndex })
})
const settings = (...paymentMethods: ReadonlyArray<object>) => ({ issuedBy: "Shop", paymentTiming: { mode: "immediate", expiresAfterMinutes: 30 }, paymentMethods })
const put = (body: unknown) => Effect.flatMap(SuiteMerchant, (merchant) => merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body }))
const createInvoice = Effect.flatMap(SuiteMerchant, (merchant) => merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } }))
const depositAddress = (invoice: JsonBody) => invoice.paymentOptions.find((option: OptionJson) => option.network === "arbitrum").destinationAddress

/** The messages the service logged (every fiber of the app, the HTTP handlers' included). */
const logged: Array<string> = []
const capture = Logger.layer([Logger.make(({ message }) => logged.push((Array.isArray(message) ? message : [message]).map(String).join(" ")))], {
  mergeWithExisting: true
})

it.layer(SuiteMerchant.layer({ withSettings: false }).pipe(Layer.provideMerge(testApp()), Layer.provide(capture)), suiteOptions)((it) => {
  describe("deposit-address reuse guard", () => {
    it.effect("a key this database never derived from is named in a warning in the answer, the GET and the log", () =>
      Effect.gen(function*() {
        const xpub = freshEvmXpub()
        const saved = yield* put(settings(evmMethod(xpub)))
        expect(saved.status).toBe(200)
        expect(saved.body.paymentMethods[0].nextIndex).toBe(0)
        expect(saved.body.warnings).toHaveLength(1)
        expect(saved.body.warnings[0]).toContain(xpub)
        expect(saved.body.warnings[0]).toContain("another database")
        expect(saved.body.warnings[0]).toContain("issued again from index 0")
        expect(logged.some((line) => line.includes(xpub) && line.includes("issued again from index 0"))).toBe(true)
        const read = yield* SuiteMerchant.pipe(Effect.flatMap((merchant) => merchant.dashboard("/api/dashboard/checkout-settings")))
        expect(read.body.warnings).toEqual(saved.body.warnings)
        // Once an address has been issued from it here, the key is this database's: no warning.
        expect((yield* createInvoice).status).toBe(201)
        expect((yield* put(settings(evmMethod(xpub)))).body).toMatchObject({ warnings: [], paymentMethods: [{ nextIndex: 1 }] })
      }))

    it.effect("a start index silences the warning, the next address is derived at it, and a lower one never lowers the counter", () =>
      Effect.gen(function*() {
        const xpub = freshEvmXpub()
        const saved = yield* put(settings(evmMethod(xpub, 7)))
        expect(saved.body).toMatchObject({ warnings: [], paymentMethods: [{ nextIndex: 7 }] })
        const { body: invoice } = yield* createInvoice
        expect(depositAddress(invoice)).toBe(evmDepositAddress(xpub, 7))
        expect((yield* put(settings(evmMethod(xpub, 3)))).body).toMatchObject({ paymentMethods: [{ nextIndex: 8 }] })
        expect(depositAddress((yield* createInvoice).body)).toBe(evmDepositAddress(xpub, 8))
      }))

    it.effect("a bitcoin start index drops pooled addresses below it: the next invoice's address is derived at the start index", () =>
      Effect.gen(function*() {
        const zpub = freshZpub()
        const bitcoin = { network: "bitcoin", assetCode: "BTC", railType: "address_transfer", xpub: zpub, isDefault: true }
        // Its pool is derived at once, but no address of it was handed out: the warning holds.
        expect((yield* put(settings(bitcoin))).body.warnings).toEqual([expect.stringContaining(zpub)])
        expect((yield* put(settings({ ...bitcoin, startIndex: 50 }))).body).toMatchObject({ warnings: [], paymentMethods: [{ nextIndex: 70 }] })
        const sql = yield* SqlClient.SqlClient
        const { body: invoice } = yield* createInvoice
        const [taken] = yield* sql<{ derivationIndex: string }>`SELECT derivation_index FROM bitcoin_address_pool
          WHERE xpub = ${zpub} AND address = ${invoice.paymentOptions[0].destinationAddress}`
        expect(Number(taken!.derivationIndex)).toBe(50)
      }))

    it.effect("a counter behind an index already issued here is refused on save until a start index passes it, and stops a start", () =>
      Effect.gen(function*() {
        const xpub = freshEvmXpub()
        yield* put(settings(evmMethod(xpub, 4)))
        yield* createInvoice
        yield* createInvoice
        const sql = yield* SqlClient.SqlClient
        // A counters table restored on its own, or a row edited by hand: the record of what was issued stays.
        yield* sql`UPDATE derivation_counters SET next_index = 2 WHERE xpub = ${xpub}`
        expect(yield* put(settings(evmMethod(xpub)))).toMatchObject({
          status: 409,
          body: {
            error: "paymentMethods[0].xpub: its derivation counter is behind index 5, already issued in this database; " +
              "set paymentMethods[0].startIndex to at least 6 so that no deposit address is issued twice"
          }
        })
        const ledger = yield* DerivationLedger
        expect(yield* ledger.behind([xpub])).toEqual([{ xpub, nextIndex: 2, highestIssued: 5 }])
        expect((yield* ledger.behind()).map((key) => key.xpub)).toContain(xpub)
        // A fresh memo map: the app's own check already ran (and passed) when the suite started.
        const start = yield* Effect.exit(
          Effect.scoped(Effect.flatMap(Layer.makeMemoMap, (memo) => Effect.flatMap(Effect.scope, (scope) => Layer.buildWithMemoMap(DerivationLedger.startupCheck, memo, scope))))
        )
        expect(Exit.isFailure(start)).toBe(true)
        expect(String(Exit.isFailure(start) ? start.cause : "")).toContain(
          `the derivation counter of ${xpub} stands at 2, but index 5 was already issued in this database`
        )
        yield* sql`DELETE FROM derivation_counters WHERE xpub = ${xpub}`
        expect((yield* put(settings(evmMethod(xpub, 5)))).status).toBe(409)
        expect((yield* put(settings(evmMethod(xpub, 6)))).body).toMatchObject({ paymentMethods: [{ nextIndex: 6 }], warnings: [] })
        expect(yield* ledger.behind([xpub])).toEqual([])
        expect(depositAddress((yield* createInvoice).body)).toBe(evmDepositAddress(xpub, 6))
      }))
  })
})
