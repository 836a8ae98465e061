import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BitcoinAddressPool, GAP_LIMIT, REFILLS_AT_ONCE } from "../../src/payments/BitcoinAddressPool.ts"
import { bitcoinAddress } from "../../src/payments/Derivation.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import { makePaymentWorker, PaymentWorker } from "../../src/payments/PaymentWorker.ts"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { freshZpub, testDatabase } from "../support/TestLayers.ts"

type Derive = (xpub: string, first: number, count: number) => Effect.Effect<ReadonlyArray<string>>

/** The real (inline) payment worker whose bitcoin derivation first runs `before`. */
const workerWith = (before: Effect.Effect<void>) => {
  const inline = makePaymentWorker([])
  const bitcoinAddresses: Derive = (xpub, first, count) => Effect.andThen(before, Effect.orDie(inline.bitcoinAddresses(xpub, first, count)))
  return { ...inline, bitcoinAddresses }
}

/** A pool of its own (its own turns and single flight, as another instance has) over the suite's database. */
const poolAndSettingsWith = (worker: ReturnType<typeof workerWith>) =>
  Effect.gen(function*() {
    // A memo map of its own: the suite's would hand back the application's pool.
    const pool = BitcoinAddressPool.layerWithoutDependencies.pipe(Layer.provide(Layer.succeed(PaymentWorker, worker)))
    const layer = Layer.merge(pool, CheckoutSettingsRepo.layerWithoutDependencies.pipe(Layer.provide(pool)))
    const context = yield* Layer.buildWithMemoMap(layer, yield* Layer.makeMemoMap, yield* Effect.scope)
    return { pool: Context.get(context, BitcoinAddressPool), settings: Context.get(context, CheckoutSettingsRepo) }
  })
const poolWith = (worker: ReturnType<typeof workerWith>) => Effect.map(poolAndSettingsWith(worker), ({ pool }) => pool)

const storedAddresses = (xpub: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ derivationIndex: number; address: string; free: boolean }>`SELECT derivation_index::int AS derivation_index, address, assigned_at IS NULL AS free
      FROM bitcoin_address_pool WHERE xpub = ${xpub} ORDER BY derivation_index`)

// The pool, the settings that fill it and the accounts that own the settings, over the database.
it.layer(Accounts.layer.pipe(Layer.provideMerge(testDatabase())), suiteOptions)((it) => {
  describe("bitcoin address pool refills", () => {
    it.effect("of one key by two instances at once store each index once, with the address derived for it", () =>
      Effect.scoped(Effect.gen(function*() {
        const xpub = freshZpub()
        // Both refills read the key's state before either stores: each derives indexes 0..19.
        const bothDeriving = yield* Deferred.make<void>()
        let deriving = 0
        const barrier = Effect.suspend(() => {
          if (++deriving === 2) Deferred.doneUnsafe(bothDeriving, Effect.void)
          return Deferred.await(bothDeriving)
        })
        const [first, second] = yield* Effect.all([poolWith(workerWith(barrier)), poolWith(workerWith(barrier))])
        const stored = yield* Effect.all([first.refill(xpub), second.refill(xpub)], { concurrency: 2 })
        expect([...stored].sort()).toEqual([0, GAP_LIMIT])
        const rows = yield* storedAddresses(xpub)
        expect(rows.map((row) => row.derivationIndex)).toEqual(Array.from({ length: GAP_LIMIT }, (_, index) => index))
        for (const row of rows) expect(row.address).toBe(bitcoinAddress(xpub, row.derivationIndex))
        // the next refill starts where the counter stands
        yield* first.take(xpub)
        expect(yield* first.refill(xpub)).toBe(1)
        expect((yield* storedAddresses(xpub)).map((row) => row.derivationIndex).at(-1)).toBe(GAP_LIMIT)
      })))

    it.effect("hold no database lock or connection while the worker thread derives", () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const xpub = freshZpub()
        const pool = yield* poolWith(workerWith(Effect.void))
        expect(yield* pool.refill(xpub)).toBe(GAP_LIMIT)
        yield* pool.take(xpub)

        const deriving = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const held = yield* poolWith(workerWith(Deferred.succeed(deriving, undefined).pipe(Effect.andThen(Deferred.await(release)))))
        const refilling = yield* Effect.forkScoped(held.refill(xpub))
        yield* Deferred.await(deriving)
        // On the embedded database's single connection a held transaction would block this outright.
        const counter = yield* sql.withTransaction(sql<{ nextIndex: number }>`SELECT next_index::int AS next_index FROM derivation_counters
          WHERE xpub = ${xpub} FOR UPDATE NOWAIT`).pipe(Effect.timeout("5 seconds"))
        expect(counter[0].nextIndex).toBe(GAP_LIMIT)
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(refilling)).toBe(1)
      })))

    it.effect("do not deadlock a settings save that fills a pool while other refills have every turn", () =>
      Effect.scoped(Effect.gen(function*() {
        const merchantId = yield* Effect.flatMap(Accounts, (accounts) => accounts.createMerchant({ email: `${crypto.randomUUID()}@merchant.test` }))
        const allDeriving = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        let calls = 0
        // The first derivations (other keys' refills, holding every turn) wait to be released.
        const heldFirst = Effect.suspend(() => {
          const call = ++calls
          if (call > REFILLS_AT_ONCE) return Effect.void
          if (call === REFILLS_AT_ONCE) Deferred.doneUnsafe(allDeriving, Effect.void)
          return Deferred.await(release)
        })
        const { pool, settings } = yield* poolAndSettingsWith(workerWith(heldFirst))
        const holding = yield* Effect.forkScoped(Effect.all(Array.from({ length: REFILLS_AT_ONCE }, () => pool.refill(freshZpub())), { concurrency: "unbounded" }))
        yield* Deferred.await(allDeriving)
        const xpub = freshZpub()
        const saving = yield* Effect.forkScoped(settings.save(merchantId, true, {
          issuedBy: null,
          timing: { mode: "immediate", expiresAfterMinutes: 60 },
          methods: [{ network: "bitcoin", assetCode: "BTC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub }]
        }))
        // Let the save reach its refill before the held ones go on to store (on the embedded
        // database's one connection, a save waiting for its turn inside its transaction never ends).
        yield* Effect.sleep("200 millis")
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(holding).pipe(Effect.timeout("10 seconds"))).toEqual(Array.from({ length: REFILLS_AT_ONCE }, () => GAP_LIMIT))
        yield* Fiber.join(saving).pipe(Effect.timeout("10 seconds"))
        expect((yield* storedAddresses(xpub)).filter((row) => row.free)).toHaveLength(GAP_LIMIT)
      })))

    it.effect("of many keys take turns on the worker thread", () =>
      Effect.scoped(Effect.gen(function*() {
        let running = 0
        let most = 0
        const counted = Effect.acquireUseRelease(
          Effect.sync(() => {
            most = Math.max(most, ++running)
          }),
          () => Effect.sleep("100 millis"),
          () =>
            Effect.sync(() => {
              running--
            })
        )
        const pool = yield* poolWith(workerWith(counted))
        const keys = Array.from({ length: REFILLS_AT_ONCE * 3 }, () => freshZpub())
        const stored = yield* Effect.all(keys.map((xpub) => pool.refill(xpub)), { concurrency: "unbounded" })
        expect(stored).toEqual(keys.map(() => GAP_LIMIT))
        expect(most).toBe(REFILLS_AT_ONCE)
      })))
  })
})
