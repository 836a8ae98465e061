import { Context, type Effect } from "effect"
import type { RefundId } from "../domain/Ids.ts"

/** A refund the watchers look for: a transfer of exactly `amountAtomic` of `token` to `key`, from any sender. */
export interface WatchedRefund {
  readonly refundId: RefundId
  readonly network: string
  /** EVM: the lower-case refund address; bitcoin: the refund address; solana: the refund's reference. */
  readonly key: string
  /** EVM: the lower-case token contract; bitcoin: ""; solana: the mint. */
  readonly token: string
  readonly toAddress: string
  readonly amountAtomic: bigint
}

/** The transaction a watcher saw paying a watched refund, and where it was mined. */
export interface RefundTransfer {
  readonly refundId: RefundId
  readonly transactionHash: string
  readonly outputIndex: number
  readonly blockHeight: bigint
  readonly blockHash: string
  readonly confirmations: number
  readonly observedAt: Date
}

/** True when a transfer pays the watched refund: same key and token, the exact amount. */
export const paysRefund = (transfer: { readonly key: string; readonly token: string; readonly amountAtomic: bigint }, refund: WatchedRefund) =>
  transfer.key === refund.key && transfer.token === refund.token && transfer.amountAtomic === refund.amountAtomic

/** The seam between the refunds and the chain watchers: what to look for, and what was seen. */
export class RefundWatch extends Context.Service<RefundWatch, {
  /** Refunds `requested` or `sent` on these networks of invoices of the mode (a watcher reads it each poll; a testnet watcher, `livemode` false, only test invoices'). */
  readonly watched: (networks: ReadonlyArray<string>, livemode: boolean) => Effect.Effect<ReadonlyArray<WatchedRefund>>
  /**
   * Records or updates the refund's transaction: `sent` below its required confirmations,
   * `completed` at them. Idempotent; a refund no longer requested or sent is left alone, and a
   * refund already bound to another transaction ignores this one.
   */
  readonly observe: (transfer: RefundTransfer) => Effect.Effect<void>
  /** A reorganisation back to `height`: refunds whose transaction's block is above it go back to `requested`. */
  readonly invalidateAbove: (network: string, height: bigint, livemode: boolean) => Effect.Effect<number>
  /**
   * One transaction left the chain (Solana: a dropped transaction, not a fork of every later slot):
   * the refunds bound to it, sent or completed, go back to `requested`. Returns how many.
   */
  readonly invalidateTransaction: (network: string, transactionHash: string, livemode: boolean) => Effect.Effect<number>
  /** Refunds `sent` on the network, not yet completed: re-reported with newer confirmation counts. */
  readonly awaiting: (network: string, livemode: boolean) => Effect.Effect<ReadonlyArray<RefundTransfer>>
}>()("Refunds/RefundWatch") {}
