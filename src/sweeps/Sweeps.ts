import { Context, Effect, Layer } from "effect"
import type { ForwarderSweep, SweepStatus } from "./ForwarderSweep.ts"
import { SweepsRepo } from "./SweepsRepo.ts"
import type { MerchantId } from "../domain/Ids.ts"

/** The merchant's forwarder sweeps, as the dashboard lists them. */
export class Sweeps extends Context.Service<Sweeps, {
  readonly list: (merchantId: MerchantId, status: SweepStatus | undefined, livemode: boolean) => Effect.Effect<{ readonly data: ReadonlyArray<ForwarderSweep> }>
}>()("Sweeps/Sweeps") {
  static readonly layer = Layer.effect(
    Sweeps,
    Effect.gen(function*() {
      const repo = yield* SweepsRepo
      return {
        list: Effect.fn("Sweeps.list")(function*(merchantId: MerchantId, status: SweepStatus | undefined, livemode: boolean) {
          return { data: yield* repo.list(merchantId, status, livemode) }
        })
      }
    })
  ).pipe(Layer.provide(SweepsRepo.layer))
}
