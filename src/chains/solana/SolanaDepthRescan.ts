import { type ConfirmedSignatureInfo, PublicKey } from "@solana/web3.js"
import { Effect } from "effect"
import { COMMITMENT, NETWORK } from "./SolanaCluster.ts"
import { corroborateReceipt, tokenAccountOf } from "./SolanaCorroboration.ts"
import { observe, type Waiting } from "./SolanaScan.ts"
import type { SolanaWatcherContext, Target } from "./SolanaWatcherContext.ts"
import { receiptOf } from "./TokenReceipt.ts"

/** One getSignaturesForAddress page: the newest 1,000 signatures of the account. */
const SIGNATURE_PAGE = 1_000

/**
 * The signatures of the account's successful transactions in (from, to], oldest first, as endpoint
 * `other` lists them, less those already recorded; undefined when it did not answer.
 */
export const missedSignatures = (context: SolanaWatcherContext, other: number, account: PublicKey, from: number, to: number) =>
  Effect.gen(function*() {
    const page = yield* context.client.callOn(other, "getSignaturesForAddress", (connection) => connection.getSignaturesForAddress(account, { limit: SIGNATURE_PAGE }, COMMITMENT))
    if (page === undefined) return undefined
    const inRange = page.filter((info) => info.err === null && info.slot > from && info.slot <= to).reverse()
    const known = yield* context.chainRepo.knownTransfers(context.scope, inRange.map((info) => info.signature))
    const knownSignatures = new Set([...known].map((key) => key.split(":")[0]))
    return inRange.filter((info) => !knownSignatures.has(info.signature))
  })

/**
 * Reads the missed transactions from endpoint `other`, oldest first, and records the payments among
 * them once corroborated (a dispute or no other answer: at 0 confirmations). The slot read up to:
 * below the first refused or disputed one, or one the endpoint cannot show, so it is read again.
 */
export const recordMissed = (context: SolanaWatcherContext, other: number, target: Target, missed: ReadonlyArray<ConfirmedSignatureInfo>, to: number, headSlot: number) =>
  Effect.gen(function*() {
    const { client, references } = context
    const transactions = missed.length === 0 ?
      [] :
      yield* client.callOn(other, "getTransactions", (connection) =>
        connection.getTransactions(missed.map((info) => info.signature), { commitment: COMMITMENT, maxSupportedTransactionVersion: 0 }))
    if (transactions === undefined) return { end: missed[0].slot - 1, found: 0 }
    let found = 0
    for (const [index, transaction] of transactions.entries()) {
      const { signature, slot } = missed[index]
      if (transaction === null) return { end: slot - 1, found }
      const receipt = receiptOf(transaction, target.tokenAccount, target.mint)
      if (receipt === undefined || !receipt.keys.some((key) => references.lookup(key) !== undefined)) continue
      const verdict = yield* corroborateReceipt(client, other, { signature, tokenAccount: target.tokenAccount, receipt, transaction })
      if (verdict === "refused") return { end: slot - 1, found }
      const waiting: Waiting | undefined = verdict === "confirmed" ? undefined : { reporter: client.labelAt(other), disputed: verdict === "disputed" }
      yield* Effect.logWarning("A payment the first reading left out was found by another endpoint").pipe(
        Effect.annotateLogs({ network: NETWORK, transactionHash: signature, foundBy: client.labelAt(other) })
      )
      if ((yield* observe(context, transaction, signature, target, receipt, headSlot, waiting)) === "evidence") found++
      if (waiting?.disputed === true) return { end: slot - 1, found }
    }
    return { end: to, found }
  })

/**
 * With several endpoints, each watched merchant token account's signatures read once more from an
 * endpoint other than the one reads go to, once they are `depth` slots deep: one getSignaturesForAddress page per account per `depth` slots, not per poll. A payment
 * the first reading left out is corroborated (the endpoint that omitted it is asked too: a majority
 * outvotes it, one against one is a dispute) and recorded. After a stop (refused, disputed, not
 * readable) the account is read again at the next poll. Positions are kept in memory: after a restart
 * they start again at the depth.
 */
export const makeSolanaDepthRescan = (context: SolanaWatcherContext, depth: number) => {
  const rescannedTo = new Map<string, number>()
  const retry = new Set<string>()
  const rescanAccount = (target: Omit<Target, "tokenAccount">, headSlot: number) =>
    Effect.gen(function*() {
      const tokenAccount = tokenAccountOf(target.recipient, target.mint)
      if (tokenAccount === undefined || !target.payments) return 0
      const account = new PublicKey(tokenAccount)
      // The account was read up to the head this poll (or stopped below a disputed payment, which is recorded).
      const deep = headSlot - depth
      const from = rescannedTo.get(tokenAccount)
      if (from === undefined) rescannedTo.set(tokenAccount, deep)
      if (from === undefined || deep <= from || (deep - from < depth && !retry.has(tokenAccount))) return 0
      const other = yield* context.client.otherEndpoint
      if (other === undefined) return 0
      const missed = yield* missedSignatures(context, other, account, from, deep)
      if (missed === undefined) return 0
      const { end, found } = yield* recordMissed(context, other, { ...target, tokenAccount }, missed, deep, headSlot)
      if (end < deep) retry.add(tokenAccount)
      else retry.delete(tokenAccount)
      rescannedTo.set(tokenAccount, Math.max(from, end))
      return found
    })
  return (targets: ReadonlyArray<Omit<Target, "tokenAccount">>, headSlot: number) =>
    Effect.gen(function*() {
      if (!context.client.several) return 0
      let found = 0
      for (const target of targets) found += yield* rescanAccount(target, headSlot)
      return found
    })
}
