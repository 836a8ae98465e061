import { Clock, Context, Duration, Effect, Layer, Schedule } from "effect"
import { ChainRepo } from "../chains/watcher/ChainRepo.ts"
import { watchedNetworks, watchedTestNetworks } from "../payments/WatchedNetworks.ts"
import { AppConfig, type ChainWatchSettings } from "../config/AppConfig.ts"
import { stateKey, type WatchScope } from "../chains/watcher/WatchScope.ts"
import { ExpiryRepo } from "../invoices/ExpiryRepo.ts"
import { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import { applyEvents } from "../lifecycle/Settlement.ts"
import { InvoiceChanges } from "../invoices/InvoiceChanges.ts"

/**
 * The watchers that hold back expiry: each network's live one for live invoices, its testnet one
 * for test invoices. An invoice of a mode whose network has no watcher of that mode waits on nothing
 * chain-related (its payments come from the simulator or the test helpers).
 */
export const expiryScopes = (chains: Pick<ChainWatchSettings, "endpoints" | "testEndpointLists">): ReadonlyArray<WatchScope> => [
  ...watchedNetworks(chains).map((network) => ({ network, livemode: true })),
  ...watchedTestNetworks(chains).map((network) => ({ network, livemode: false }))
]

/**
 * Expires invoices whose final payable deadline has passed. Each batch is claimed with
 * FOR UPDATE SKIP LOCKED through the partial index on payable_until_at, so several service
 * instances expire invoices side by side without waiting on or double-processing each other.
 */
export class InvoiceExpiry extends Context.Service<InvoiceExpiry, {
  /** Expires until nothing is due; returns how many invoices expired. */
  readonly expire: (batchSize?: number) => Effect.Effect<number>
}>()("Expiry/InvoiceExpiry") {
  static readonly layerWithoutDependencies = Layer.effect(
    InvoiceExpiry,
    Effect.gen(function*() {
      const repo = yield* InvoiceRepo
      const expiry = yield* ExpiryRepo
      const chainRepo = yield* ChainRepo
      const { chains } = yield* AppConfig
      const scopes = expiryScopes(chains)

      // A watched network's watcher must have processed chain data up to an invoice's deadline
      // before it expires: a transfer mined in time but not yet seen would otherwise be called late.
      // A test invoice waits on its testnet watcher (state key `<network>:test`), never the live one.
      const watchedProgress = Effect.map(chainRepo.chainTimes(scopes.map(stateKey)),
        (rows) => scopes.map((scope) => ({ ...scope, chainTime: rows.find((row) => row.network === stateKey(scope))?.chainTime ?? null })))

      const expireBatch = (batchSize: number) =>
        repo.withTransaction(Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const due = yield* expiry.claimDueForExpiry(now, batchSize, yield* watchedProgress)
          for (const invoice of due) {
            const expired = applyEvents(invoice, [{ type: "DEADLINE_PASSED" }], now)
            yield* repo.save(expired.invoice, expired.events)
          }
          return due.length
        }))

      const expire = Effect.fn("InvoiceExpiry.expire")(function*(batchSize: number = 500) {
        let total = 0
        while (true) {
          const count = yield* expireBatch(batchSize)
          total += count
          if (count < batchSize) return total
        }
      })
      return { expire }
    })
  ).pipe(Layer.provide(ChainRepo.layer))

  static readonly layer = InvoiceExpiry.layerWithoutDependencies.pipe(Layer.provide([InvoiceChanges.publishingRepo, ExpiryRepo.layer]))

  /** The background fiber: expires due invoices every CHECKOUT_SWEEP_INTERVAL_MS while the service runs. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const { sweepIntervalMs } = yield* AppConfig
    const expiry = yield* InvoiceExpiry
    yield* expiry.expire().pipe(
      Effect.catchCause((cause) => Effect.logError("Invoice expiry failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(sweepIntervalMs))),
      Effect.forkScoped
    )
  })).pipe(Layer.provide(InvoiceExpiry.layer))
}
