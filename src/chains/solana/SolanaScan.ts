import { getAssociatedTokenAddressSync } from "@solana/spl-token"
import { type ConfirmedSignatureInfo, PublicKey, type VersionedTransactionResponse } from "@solana/web3.js"
import { Effect } from "effect"
import type { WatchedRefund } from "../../refunds/RefundWatch.ts"
import { ChainRpcError } from "../source/ChainSource.ts"
import type { WatchedOption } from "../source/WatchedOption.ts"
import { COMMITMENT, NETWORK, type SolanaRpcClient } from "./SolanaCluster.ts"
import { corroborateReceipt } from "./SolanaCorroboration.ts"
import { refundTokenAccount } from "./SolanaRefunds.ts"
import type { AccountCursor } from "./SolanaRepo.ts"
import { MEMO_PROGRAM_ID, MEMO_V1_PROGRAM_ID } from "./SolanaTransfer.ts"
import { chainTimeOf, slotRef, type SolanaWatcherContext, type Target } from "./SolanaWatcherContext.ts"
import { receiptOf, type TokenReceipt } from "./TokenReceipt.ts"

/** getSignaturesForAddress answers at most 1,000 per call. */
const SIGNATURE_PAGE = 1_000
/** Transactions fetched per JSON-RPC batch. */
const TRANSACTION_BATCH = 50

export interface ScanCounts {
  evidence: number
  unmatched: number
  refundsSeen: number
}

/** New signatures of an account, newest first: back to the cursor (or, for a new account, the retention period). */
const newSignatures = (client: SolanaRpcClient, account: PublicKey, cursor: AccountCursor | undefined, notBefore: number) =>
  Effect.gen(function*() {
    const found: Array<ConfirmedSignatureInfo> = []
    let newest: ConfirmedSignatureInfo | undefined
    let before: string | undefined
    while (true) {
      const page = yield* client.call("getSignaturesForAddress",
        (connection) => connection.getSignaturesForAddress(account, { limit: SIGNATURE_PAGE, before, until: cursor?.signature }, COMMITMENT))
      newest ??= page[0]
      let done = page.length < SIGNATURE_PAGE
      for (const info of page) {
        // Below the cursor's slot: the cursor's own transaction has left the chain, so `until` did not stop the page.
        if (cursor !== undefined && BigInt(info.slot) < cursor.slot) {
          done = true
          break
        }
        if (cursor === undefined && info.blockTime != null && info.blockTime * 1000 < notBefore) {
          done = true
          break
        }
        found.push(info)
      }
      if (done) return { found, newest }
      before = page[page.length - 1].signature
    }
  })

const memosOf = (transaction: VersionedTransactionResponse, keys: ReadonlyArray<string>) =>
  transaction.transaction.message.compiledInstructions
    .filter((instruction) => {
      const program = keys[instruction.programIdIndex]
      return program === MEMO_PROGRAM_ID.toBase58() || program === MEMO_V1_PROGRAM_ID.toBase58()
    })
    .map((instruction) => Buffer.from(instruction.data).toString("utf8"))

/** One transaction into a merchant's token account, as read for one of the watched options whose reference it carries. */
interface Observation {
  readonly transaction: VersionedTransactionResponse
  readonly signature: string
  readonly target: Target
  readonly receipt: TokenReceipt
  readonly headSlot: number
  readonly memo: string | null
  readonly chainTime: Date
  readonly slot: bigint
  readonly reference: string
  readonly option: WatchedOption
}

/** A payment no majority of the other endpoints corroborated yet: who reported it, and whether another denies it. */
export interface Waiting {
  readonly reporter: string
  readonly disputed: boolean
}

/** The transfer as read, with what became of it (one row per signature and token account). */
const recordTransfer = (context: SolanaWatcherContext, seen: Observation, outcome: "evidence" | "refused" | "wrong_token" | "wrong_recipient") =>
  context.repo.recordTransfer({
    signature: seen.signature,
    tokenAccount: seen.target.tokenAccount,
    slot: seen.slot,
    blockTime: seen.chainTime,
    reference: seen.reference,
    paymentOptionId: seen.option.optionId,
    mint: seen.receipt.mint,
    amountAtomic: seen.receipt.received,
    memo: seen.memo,
    outcome
  })

/** Evidence for the option through PaymentEvidence, and the transfer as read; true when it was recorded. */
const recordMatched = (context: SolanaWatcherContext, seen: Observation, waiting: Waiting | undefined) =>
  Effect.gen(function*() {
    const { transaction, signature, target, receipt, headSlot, chainTime, slot, option } = seen
    const { accountIndex, received } = receipt
    const identity = { transactionHash: signature, outputIndex: accountIndex }
    if (waiting !== undefined) yield* context.chainRepo.markUncorroborated(context.scope, { ...identity, ...waiting, token: receipt.mint })
    const recorded = yield* context.evidence.record({
      paymentOptionId: option.optionId,
      transactionHash: signature,
      // The recipient token account's index in the transaction: one balance change per account.
      outputIndex: accountIndex,
      amountAtomic: received,
      confirmations: waiting === undefined ? Math.max(1, headSlot - transaction.slot + 1) : 0,
      observedAt: chainTime,
      destinationAddress: target.recipient,
      payerAddress: receipt.payer,
      blockHeight: slot,
      blockHash: slotRef(slot)
    }).pipe(
      Effect.as(true),
      Effect.tap(() => context.applied("evidence")),
      Effect.catchTag("EvidenceRejected", (error) => context.rejected(error, signature).pipe(Effect.as(false)))
    )
    if (waiting === undefined) yield* context.chainRepo.clearUncorroborated(context.scope, signature, accountIndex)
    yield* recordTransfer(context, seen, recorded ? "evidence" : "refused")
    return recorded
  })

/** A deposit carrying an option's reference but of another token or to another recipient: recorded as unmatched. */
const recordUnmatchedDeposit = (context: SolanaWatcherContext, seen: Observation, reason: "wrong_token" | "wrong_recipient") =>
  Effect.gen(function*() {
    const { signature, target, receipt, chainTime, slot, option } = seen
    const { accountIndex, mint, received } = receipt
    yield* context.chainRepo.recordUnmatched({
      merchantId: option.merchantId,
      invoiceId: option.invoiceId,
      network: NETWORK,
      assetCode: context.options.mints.get(mint) ?? "unknown",
      tokenContract: mint,
      toAddress: target.recipient,
      transactionHash: signature,
      outputIndex: accountIndex,
      amountAtomic: received,
      blockHeight: slot,
      blockHash: slotRef(slot),
      chainTime,
      reason
    })
    yield* recordTransfer(context, seen, reason)
    yield* Effect.logWarning("Unmatched Solana deposit carrying an option's reference").pipe(
      Effect.annotateLogs({ invoiceId: option.invoiceId, reason, transactionHash: signature })
    )
    yield* context.applied("unmatched")
  })

/** Reads what one transaction moved into a merchant's token account: evidence, an unmatched deposit, or nothing of ours. */
export const observe = (
  context: SolanaWatcherContext,
  transaction: VersionedTransactionResponse,
  signature: string,
  target: Target,
  receipt: TokenReceipt,
  headSlot: number,
  waiting: Waiting | undefined
) =>
  Effect.gen(function*() {
    const { keys, mint } = receipt
    const matches: Array<{ readonly reference: string; readonly option: WatchedOption }> = []
    for (const key of new Set(keys)) for (const option of context.references.lookup(key) ?? []) matches.push({ reference: key, option })
    if (matches.length === 0) return "ignored" as const
    const memos = memosOf(transaction, keys)
    const memo = memos.length === 0 ? null : memos.join("\n")
    const chainTime = yield* chainTimeOf(context.client, transaction)
    const slot = BigInt(transaction.slot)
    let outcome: "evidence" | "unmatched" = "unmatched"
    for (const { reference, option } of matches) {
      const expectedMemo = `${context.options.servicePrefix}:${option.invoiceId}:${option.optionId}`
      if (memo !== expectedMemo) {
        yield* Effect.logWarning("Solana payment without the option's memo (the reference identifies it)").pipe(
          Effect.annotateLogs({ transactionHash: signature, optionId: option.optionId, memo: memo ?? "(none)" })
        )
      }
      const toThisRecipient = (context.accounts.lookup(`${target.recipient}:${target.mint}`) ?? []).some((entry) => entry.optionId === option.optionId)
      const reason = option.tokenContract !== mint ? "wrong_token" : toThisRecipient ? undefined : "wrong_recipient"
      const seen: Observation = { transaction, signature, target, receipt, headSlot, memo, chainTime, slot, reference, option }
      if (reason === undefined) {
        if (yield* recordMatched(context, seen, waiting)) outcome = "evidence"
        continue
      }
      yield* recordUnmatchedDeposit(context, seen, reason)
    }
    return outcome
  })

/** A transaction paying a watched refund: marked first when it waits for corroboration, its mark cleared once corroborated. */
const observeRefund = (
  context: SolanaWatcherContext,
  refund: WatchedRefund,
  signature: string,
  receipt: TokenReceipt,
  transaction: VersionedTransactionResponse,
  headSlot: number,
  waiting: Waiting | undefined
) =>
  Effect.gen(function*() {
    const identity = { transactionHash: signature, outputIndex: receipt.accountIndex }
    if (waiting !== undefined) yield* context.chainRepo.markUncorroborated(context.scope, { ...identity, ...waiting, token: receipt.mint })
    const chainTime = yield* chainTimeOf(context.client, transaction)
    yield* context.refunds.observe(refund, signature, receipt, transaction.slot, chainTime, headSlot, waiting !== undefined)
    if (waiting === undefined) yield* context.chainRepo.clearUncorroborated(context.scope, signature, receipt.accountIndex)
  })

/**
 * Reads one batch of an account's transactions, oldest first, into `counts`. "stopped" when a
 * transaction was not corroborated: the scan ends there and the account's cursor stays.
 */
const readBatch = (
  context: SolanaWatcherContext,
  target: Target,
  batch: Array<string>,
  headSlot: number,
  refundsPaid: Set<string>,
  counts: ScanCounts
) =>
  Effect.gen(function*() {
    const { client, refunds, references } = context
    const { tokenAccount, mint } = target
    const { reporter, value: transactions } = yield* client.callAt("getTransactions",
      (connection) => connection.getTransactions(batch, { commitment: COMMITMENT, maxSupportedTransactionVersion: 0 }))
    for (const [index, transaction] of transactions.entries()) {
      // Listed but not readable yet (a lagging node): try again at the next poll rather than move past it.
      if (transaction === null) {
        return yield* new ChainRpcError({ network: NETWORK, message: `getTransaction: ${batch[index]} is not available yet` })
      }
      const receipt = receiptOf(transaction, tokenAccount, mint)
      if (receipt === undefined) continue
      const refund = refunds.paid(receipt, target.refunds, refundsPaid)
      const taken = refund !== undefined || (target.payments && receipt.keys.some((key) => references.lookup(key) !== undefined))
      const verdict = taken && client.several
        ? yield* corroborateReceipt(client, reporter, { signature: batch[index], tokenAccount, receipt, transaction })
        : "confirmed"
      // Refused: not credited, and the account's cursor stays, so the next poll reads it again from
      // there (from an endpoint not marked disagreeing). A disputed or uncorroborated payment is
      // detected at 0 confirmations (a refund's transfer: `sent`, never `completed`); the cursor
      // stays below a disputed one.
      const waiting = verdict === "unanswered" || verdict === "disputed"
        ? { reporter: client.labelAt(reporter), disputed: verdict === "disputed" }
        : undefined
      if (verdict === "refused") return "stopped" as const
      if (refund !== undefined) {
        refundsPaid.add(refund.refundId)
        yield* observeRefund(context, refund, batch[index], receipt, transaction, headSlot, waiting)
        counts.refundsSeen++
        if (waiting?.disputed === true) return "stopped" as const
      }
      // A transaction that pays a refund is never also a payment.
      if (refund !== undefined || !target.payments) continue
      const outcome = yield* observe(context, transaction, batch[index], target, receipt, headSlot, waiting)
      if (outcome !== "ignored") counts[outcome]++
      if (waiting?.disputed === true) return "stopped" as const
    }
    return "read" as const
  })

/** Reads an account's transactions since its cursor, or (`since`) again from a given signature and slot without moving the cursor. */
export const scanAccount = (
  context: SolanaWatcherContext,
  target: Omit<Target, "tokenAccount">,
  headSlot: number,
  notBefore: number,
  since?: AccountCursor
) =>
  Effect.gen(function*() {
    const counts: ScanCounts = { evidence: 0, unmatched: 0, refundsSeen: 0 }
    const { recipient, mint } = target
    let account: PublicKey
    try {
      account = getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(recipient), true)
    } catch {
      yield* Effect.logWarning("Not a Solana recipient and mint pair; skipped").pipe(Effect.annotateLogs({ recipient, mint }))
      return counts
    }
    const tokenAccount = account.toBase58()
    // The first transaction paying a refund wins; the seam ignores later ones across polls.
    const refundsPaid = new Set<string>()
    const cursor = since ?? (yield* context.repo.cursor(tokenAccount))
    const { found, newest } = yield* newSignatures(context.client, account, cursor, notBefore)
    const successful = found.filter((info) => info.err === null).reverse()
    for (let start = 0; start < successful.length; start += TRANSACTION_BATCH) {
      const batch = successful.slice(start, start + TRANSACTION_BATCH).map((info) => info.signature)
      const read = yield* readBatch(context, { ...target, tokenAccount }, batch, headSlot, refundsPaid, counts)
      if (read === "stopped") return counts
    }
    if (since === undefined && newest !== undefined && newest.signature !== cursor?.signature) {
      yield* context.repo.saveCursor(tokenAccount, { signature: newest.signature, slot: BigInt(newest.slot) })
    }
    return counts
  })

/** The merchants' token accounts with watched options and the refund addresses' ones with watched refunds, each once. */
export const targets = (context: SolanaWatcherContext, watchedRefunds: ReadonlyArray<WatchedRefund>) => {
  const { accounts, options } = context
  const byAccount = new Map<string, { recipient: string; mint: string; payments: boolean; refunds: Array<WatchedRefund> }>()
  for (const key of accounts.keys()) {
    const [recipient, mint] = key.split(":")
    if (options.mints.has(mint)) byAccount.set(key, { recipient, mint, payments: true, refunds: [] })
  }
  for (const refund of watchedRefunds) {
    if (!options.mints.has(refund.token) || refundTokenAccount(refund) === undefined) continue
    const key = `${refund.toAddress}:${refund.token}`
    const target = byAccount.get(key) ?? { recipient: refund.toAddress, mint: refund.token, payments: false, refunds: [] }
    target.refunds.push(refund)
    byAccount.set(key, target)
  }
  return [...byAccount.values()]
}
