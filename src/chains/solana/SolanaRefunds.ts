import { getAssociatedTokenAddressSync } from "@solana/spl-token"
import { PublicKey } from "@solana/web3.js"
import { Effect } from "effect"
import { paysRefund, type RefundTransfer, RefundWatch, type WatchedRefund } from "../../refunds/RefundWatch.ts"
import { goneFromChain, signatureStatuses } from "./SignatureStatus.ts"
import { NETWORK, type SolanaRpcClient } from "./SolanaCluster.ts"
import type { TokenReceipt } from "./TokenReceipt.ts"

/** The refund address's associated token account of the refund's mint; undefined when either is not a key. */
export const refundTokenAccount = (refund: WatchedRefund) => {
  try {
    return getAssociatedTokenAddressSync(new PublicKey(refund.token), new PublicKey(refund.toAddress), true).toBase58()
  } catch {
    return undefined
  }
}

const slotRef = (slot: bigint | number) => `slot:${slot}`

/**
 * Solana refunds: a refund is paid by a successful transaction that carries the refund's reference
 * and raises the balance of the refund address's associated token account of the refund's mint by
 * exactly its amount. The watcher reads those token accounts as it reads the merchants' ones.
 */
export const makeSolanaRefunds = (client: SolanaRpcClient, livemode: boolean) =>
  Effect.gen(function*() {
    const refunds = yield* RefundWatch
    return {
      watched: refunds.watched([NETWORK], livemode),
      /** The watched refund (not `taken` yet in this poll) that a receipt of `refundsOfAccount`'s token account pays. */
      paid: (receipt: TokenReceipt, refundsOfAccount: ReadonlyArray<WatchedRefund>, taken: ReadonlySet<string>) => {
        const keys = new Set(receipt.keys)
        return refundsOfAccount.find((refund) =>
          !taken.has(refund.refundId) && keys.has(refund.key) &&
          paysRefund({ key: refund.key, token: receipt.mint, amountAtomic: receipt.received }, refund)
        )
      },
      /** `waiting`: no majority of the other endpoints corroborated it yet, so it is `sent` at 0 confirmations. */
      observe: (refund: WatchedRefund, signature: string, receipt: TokenReceipt, slot: number, chainTime: Date, headSlot: number, waiting: boolean) =>
        refunds.observe({
          refundId: refund.refundId,
          transactionHash: signature,
          outputIndex: receipt.accountIndex,
          blockHeight: BigInt(slot),
          blockHash: slotRef(slot),
          confirmations: waiting ? 0 : Math.max(1, headSlot - slot + 1),
          observedAt: chainTime
        }),
      /** A refund's transfer a majority of the endpoints denies: the refunds bound to it go back to `requested`. */
      invalidateTransaction: (transactionHash: string) => refunds.invalidateTransaction(NETWORK, transactionHash, livemode),
      /**
       * Sent refunds get the confirmation count at `headSlot`. One whose transaction left the chain
       * goes back to `requested` (returned as `dropped`, with how many refunds were `reverted`): only
       * the refunds bound to that transaction, since on Solana one dropped transaction says nothing of
       * the others in its slot or after it (a refund already completed there stays completed). One
       * whose transfer waits for corroboration (`waiting`, as `hash:index`) stays at 0 confirmations.
       */
      confirm: (headSlot: number, waiting: ReadonlySet<string>) =>
        Effect.gen(function*() {
          const awaiting = yield* refunds.awaiting(NETWORK, livemode)
          const dropped: Array<RefundTransfer> = []
          const gone = new Set<string>()
          let updated = 0
          let reverted = 0
          const statuses = yield* signatureStatuses(client, awaiting.map((known) => known.transactionHash))
          for (const [index, known] of awaiting.entries()) {
            const status = statuses[index]
            if (status === null) {
              // Unknown to every endpoint: gone; while one does not answer, the refund stays as it is.
              if ((yield* goneFromChain(client, known.transactionHash)) !== true) continue
              dropped.push(known)
              if (gone.has(known.transactionHash)) continue
              gone.add(known.transactionHash)
              reverted += yield* refunds.invalidateTransaction(NETWORK, known.transactionHash, livemode)
              continue
            }
            const confirmations = Math.max(1, headSlot - status.slot + 1)
            if (confirmations <= known.confirmations || waiting.has(`${known.transactionHash}:${known.outputIndex}`)) continue
            const at = BigInt(status.slot)
            yield* refunds.observe({ ...known, blockHeight: at, blockHash: slotRef(at), confirmations })
            updated++
          }
          return { updated, dropped, reverted }
        })
    }
  })
