import type { Effect } from "effect"

/**
 * With several endpoints, a transfer becomes evidence only when an endpoint other than the one
 * that reported it confirms it (docs/chains.md, "Corroborated transfers"). These are the rules,
 * without I/O; EndpointPool.corroborate asks, MultiSource and the Solana watcher use it.
 */

/** What a watcher needs to compare of a reported transfer; `blockHash` is absent for a mempool one. */
export interface ReportedTransfer {
  readonly transactionHash: string
  readonly outputIndex: number
  readonly token: string
  readonly toAddress: string
  readonly amountAtomic: bigint
  readonly blockHeight?: bigint | undefined
  readonly blockHash?: string | undefined
}

/** A transfer as another endpoint sees its transaction (a receipt, an Esplora transaction, a Solana transaction). */
export interface SeenTransfer {
  readonly transactionHash: string
  readonly outputIndex: number
  readonly token: string
  readonly toAddress: string
  readonly amountAtomic: bigint
  /** Undefined while the transaction is unconfirmed. */
  readonly blockHash: string | undefined
}

/** One other endpoint's answer: it shows the same transfer, something else (or nothing), or it cannot tell yet. */
export type Answer = "same" | "different" | "unknown"

/** The outcome for a reported transfer: evidence, refused (the others deny it), or not decided (nobody else answered). */
export type Verdict = "confirmed" | "refused" | "unanswered"

/** Corroborates each reported transfer with the other endpoints: one verdict per transfer, in order. */
export type Corroborate = (transfers: ReadonlyArray<ReportedTransfer>) => Effect.Effect<ReadonlyArray<Verdict>>

/** Transfers as one endpoint reported them, with the way to corroborate them (absent with a single endpoint: taken as they are). */
export interface Reported<T> {
  readonly transfers: ReadonlyArray<T>
  readonly corroborate?: Corroborate | undefined
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/**
 * Whether a transaction as another endpoint shows it holds the reported transfer: same position,
 * token, recipient, amount and, for a mined one, block hash. `seen` undefined: it knows no such
 * transaction; that denies a mined transfer only when its head has reached the block (else it may
 * just be behind), and never decides a mempool one's absence alone (it may not have relayed it yet).
 */
export const answerFor = (reported: ReportedTransfer, seen: ReadonlyArray<SeenTransfer> | undefined, endpointHead: bigint | undefined): Answer => {
  if (seen === undefined) {
    if (reported.blockHeight === undefined) return "unknown"
    return endpointHead !== undefined && endpointHead < reported.blockHeight ? "unknown" : "different"
  }
  const match = seen.find((transfer) => sameAddress(transfer.transactionHash, reported.transactionHash) && transfer.outputIndex === reported.outputIndex)
  if (match === undefined) return "different"
  const sameTransfer = sameAddress(match.token, reported.token) && sameAddress(match.toAddress, reported.toAddress) && match.amountAtomic === reported.amountAtomic
  if (!sameTransfer) return "different"
  if (reported.blockHash === undefined) return "same"
  if (match.blockHash === undefined) return endpointHead !== undefined && reported.blockHeight !== undefined && endpointHead < reported.blockHeight ? "unknown" : "different"
  return sameAddress(match.blockHash, reported.blockHash) ? "same" : "different"
}

/** Several endpoints' answers, asked one after the other: confirmed by any, refused when someone denied and no one confirmed. */
export const verdictOf = (answers: ReadonlyArray<Answer>): Verdict => answers.includes("same") ? "confirmed" : answers.includes("different") ? "refused" : "unanswered"
