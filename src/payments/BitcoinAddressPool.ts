import { Context, Duration, Effect, Layer, Schedule, Semaphore } from "effect"
import { BitcoinAddressPoolRepo } from "./BitcoinAddressPoolRepo.ts"
import { PaymentWorker } from "./PaymentWorker.ts"

/** Wallets stop scanning after 20 unused addresses (BIP44's gap limit): never derive further ahead. */
export const GAP_LIMIT = 20

/**
 * Refills under way at once in a process: enough to keep up with creates at the service's full
 * rate, few enough that keys running low together cannot queue a burst of derivations on the
 * worker thread ahead of every create's options.
 */
export const REFILLS_AT_ONCE = 2

/**
 * Pre-derived BIP84 receive addresses per account key. Creating an invoice takes the lowest
 * free one (SKIP LOCKED, so concurrent creates never share one); a refill derives up to the gap
 * limit of free addresses ahead, reserving indexes from the same per-key counter as every other
 * derivation, so an index is never handed out twice.
 */
export class BitcoinAddressPool extends Context.Service<BitcoinAddressPool, {
  /** Takes a free address (and says how many are left), or undefined while the pool of this key is being prepared. */
  readonly take: (xpub: string) => Effect.Effect<{ readonly address: string; readonly derivationIndex: number; readonly remaining: number } | undefined>
  /** Derives free addresses until `GAP_LIMIT` are available for the key. */
  readonly refill: (xpub: string, target?: number) => Effect.Effect<number>
  /** Refills every bitcoin key of every merchant (the background worker). */
  readonly refillAll: Effect.Effect<void>
}>()("Payments/BitcoinAddressPool") {
  static readonly layerWithoutDependencies = Layer.effect(
    BitcoinAddressPool,
    Effect.gen(function*() {
      const repo = yield* BitcoinAddressPoolRepo
      const worker = yield* PaymentWorker

      // A refill derives before it writes, and writes in one statement: no connection and no lock
      // is held while the worker thread computes. Refills take turns in this process (a few at
      // once), so that the keys of many merchants running low together do not queue a burst of
      // derivations on the worker thread ahead of every create's options. Across instances, the
      // counter's compare-and-set (BitcoinAddressPoolRepo.storeDerived) decides: of two refills of
      // one key, the first to store keeps its addresses, the other stores nothing.
      const refilling = new Set<string>()
      const turns = yield* Semaphore.make(REFILLS_AT_ONCE)
      const refill = (xpub: string, target: number = GAP_LIMIT) =>
        Effect.suspend(() => {
          if (refilling.has(xpub)) return Effect.succeed(0)
          refilling.add(xpub)
          return turns.withPermits(1)(refillOnce(xpub, target)).pipe(Effect.ensuring(Effect.sync(() => refilling.delete(xpub))))
        }).pipe(Effect.withSpan("BitcoinAddressPool.refill"))

      const refillOnce = (xpub: string, target: number) =>
        Effect.gen(function*() {
          const { free, nextIndex } = yield* repo.state(xpub)
          const missing = target - free
          if (missing <= 0) return 0
          const derived = yield* worker.bitcoinAddresses(xpub, nextIndex, missing)
          return yield* repo.storeDerived(xpub, nextIndex, derived)
        }).pipe(Effect.orDie)

      const take = Effect.fnUntraced(function*(xpub: string) {
        return yield* repo.takeFree(xpub)
      })

      const refillAll = Effect.gen(function*() {
        const keys = yield* repo.keys
        yield* Effect.forEach(keys, (xpub) => refill(xpub), { discard: true })
      }).pipe(Effect.withSpan("BitcoinAddressPool.refillAll"))

      return { take, refill, refillAll }
    })
  ).pipe(Layer.provide(BitcoinAddressPoolRepo.layer))

  static readonly layer = BitcoinAddressPool.layerWithoutDependencies.pipe(Layer.provide(PaymentWorker.layer))

  /** Keeps every pool full in the background. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const pool = yield* BitcoinAddressPool
    yield* pool.refillAll.pipe(
      Effect.catchCause((cause) => Effect.logError("Bitcoin address pool refill failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(5))),
      Effect.forkScoped
    )
  })).pipe(Layer.provide(BitcoinAddressPool.layer))
}
