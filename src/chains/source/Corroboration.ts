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

/** One endpoint's answer: it shows the same transfer, something else (or nothing), or it cannot tell yet. */
export type Answer = "same" | "different" | "unknown"

/**
 * The outcome for a reported transfer: `confirmed` (a majority of those asked, the reporter
 * included, shows it, and at least one other endpoint does), `refused` (a majority denies it),
 * `disputed` (as many deny it as show it: no verdict, no one blamed), `unanswered` (no other
 * endpoint could tell yet). Only `confirmed` adds confirmations; `disputed` and `unanswered` are
 * evidence at 0 confirmations.
 */
export type Verdict = "confirmed" | "refused" | "disputed" | "unanswered"

/** One endpoint's answer about a reported transfer, by its index among the network's endpoints. */
export interface Vote {
  readonly index: number
  readonly answer: Answer
}

/** A verdict and the endpoints a majority contradicted (to mark `disagreeing`): the reporter when refused, the deniers when confirmed. */
export interface Decision {
  readonly verdict: Verdict
  readonly outvoted: ReadonlyArray<number>
  /** The endpoints that denied it (named in a dispute's warning). */
  readonly deniers: ReadonlyArray<number>
}

/**
 * The majority rule. The reporter's own report counts as one voice for the transfer, unless it
 * was asked again and now denies it (a receipt it cannot show). One witness against one reporter
 * is a dispute, never a verdict: an endpoint is marked `disagreeing` only when a majority of the
 * endpoints asked contradicts it.
 */
export const decide = (reporter: number, votes: ReadonlyArray<Vote>): Decision => {
  const own = votes.find((vote) => vote.index === reporter)?.answer
  const reporterSays: Answer = own === "different" ? "different" : "same"
  const others = votes.filter((vote) => vote.index !== reporter && vote.answer !== "unknown")
  const showing = [...(reporterSays === "same" ? [reporter] : []), ...others.filter((vote) => vote.answer === "same").map((vote) => vote.index)]
  const denying = [...(reporterSays === "different" ? [reporter] : []), ...others.filter((vote) => vote.answer === "different").map((vote) => vote.index)]
  const deniers = denying.filter((index) => index !== reporter)
  if (others.length === 0 && reporterSays === "same") return { verdict: "unanswered", outvoted: [], deniers }
  if (showing.length > denying.length && showing.some((index) => index !== reporter)) return { verdict: "confirmed", outvoted: deniers, deniers }
  if (denying.length > showing.length) return { verdict: "refused", outvoted: [reporter, ...showing.filter((index) => index !== reporter)], deniers }
  return { verdict: showing.length > denying.length ? "unanswered" : "disputed", outvoted: [], deniers }
}

/**
 * Whether asking the `remaining` endpoints not asked yet could still change the decision: the
 * asking stops as soon as the majority is out of their reach (one lookup in the usual case).
 */
export const isSettled = (reporter: number, votes: ReadonlyArray<Vote>, remaining: number): boolean => {
  const { verdict } = decide(reporter, votes)
  if (verdict !== "confirmed" && verdict !== "refused") return remaining === 0
  const counted = votes.filter((vote) => vote.answer !== "unknown" && vote.index !== reporter)
  const own = votes.find((vote) => vote.index === reporter)?.answer === "different" ? "different" : "same"
  const showing = counted.filter((vote) => vote.answer === "same").length + (own === "same" ? 1 : 0)
  const denying = counted.filter((vote) => vote.answer === "different").length + (own === "different" ? 1 : 0)
  return Math.abs(showing - denying) > remaining
}

/** Corroborates each reported transfer with the other endpoints: one verdict per transfer, in order. */
export type Corroborate = (transfers: ReadonlyArray<ReportedTransfer>) => Effect.Effect<ReadonlyArray<Verdict>>

/** Transfers as one endpoint reported them, with the way to corroborate them (absent with a single endpoint: taken as they are). */
export interface Reported<T> {
  readonly transfers: ReadonlyArray<T>
  readonly corroborate?: Corroborate | undefined
  /** The reporting endpoint's label (its origin), kept with a transfer that waits for corroboration. */
  readonly reporter?: string | undefined
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
