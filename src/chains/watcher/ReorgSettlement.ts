import { Effect } from "effect"
import { type EvidenceRejected, PaymentEvidence } from "../../invoices/PaymentEvidence.ts"
import { ChainRepo } from "./ChainRepo.ts"
import type { WatchScope } from "./WatchScope.ts"

/**
 * For a watcher that has processed `height`: judges the invoices whose evidence a reorganisation
 * invalidated and whose required confirmations beyond the reorg point are now processed. Evidence
 * mined again meanwhile was revived and is no longer listed; what is still missing is put before
 * the merchant (PaymentEvidence.settleReorg). Returns how many were judged.
 */
export const makeReorgSettlement = Effect.gen(function*() {
  const repo = yield* ChainRepo
  const evidence = yield* PaymentEvidence
  return (scope: WatchScope, height: bigint, rejected: (error: EvidenceRejected, transactionHash: string) => Effect.Effect<void>) =>
    Effect.gen(function*() {
      const due = yield* repo.reorgsSettledAt(scope, height)
      for (const settled of due) {
        yield* evidence.settleReorg({ network: scope.network, transactionHash: settled.transactionHash, outputIndex: settled.outputIndex }).pipe(
          Effect.catchTag("EvidenceRejected", (error) => rejected(error, settled.transactionHash))
        )
      }
      return due.length
    })
})
