import { getAssociatedTokenAddressSync } from "@solana/spl-token"
import { type ConfirmedSignatureInfo, PublicKey, type VersionedTransactionResponse } from "@solana/web3.js"
import { Clock, Effect } from "effect"
import { type EvidenceRejected, PaymentEvidence } from "../../invoices/PaymentEvidence.ts"
import { ChainRepo } from "../ChainRepo.ts"
import { ChainRpcError } from "../ChainSource.ts"
import type { ChainWatcher, PollReport } from "../ChainWatcher.ts"
import { makeWatchIndex, type WatchedOption } from "../WatchedOptions.ts"
import { WatchedOptionsRepo } from "../WatchedOptionsRepo.ts"
import { makeReorgSettlement } from "../ReorgSettlement.ts"
import type { WatchedRefund } from "../../refunds/RefundWatch.ts"
import { goneFromChain, signatureStatuses } from "./SignatureStatus.ts"
import { makeSolanaRefunds, refundTokenAccount } from "./SolanaRefunds.ts"
import { type AccountCursor, makeSolanaRepo } from "./SolanaRepo.ts"
import { COMMITMENT, NETWORK, type SolanaClient } from "./SolanaCluster.ts"
import { corroborateReceipt } from "./SolanaCorroboration.ts"
import { MEMO_PROGRAM_ID, MEMO_V1_PROGRAM_ID } from "./SolanaTransfer.ts"
import { receiptOf, type TokenReceipt } from "./TokenReceipt.ts"

export interface SolanaWatcherOptions {
  readonly client: SolanaClient
  /** The configured mints: address → asset code. */
  readonly mints: ReadonlyMap<string, string>
  /** `<prefix>` of the memos the service writes (`<prefix>:<invoice_id>:<option_id>`). */
  readonly servicePrefix: string
  /** How long after their payable window options stay watched; also how far back a new account is read. */
  readonly retentionMillis: number
  readonly onApplied?: (outcome: "evidence" | "unmatched" | "invalidated" | "rejected") => Effect.Effect<void>
}

/** getSignaturesForAddress answers at most 1,000 per call. */
const SIGNATURE_PAGE = 1_000
/** Transactions fetched per JSON-RPC batch. */
const TRANSACTION_BATCH = 50
/** A confirmed transaction that is no longer on the chain was on a fork the cluster abandoned. */
const DROPPED = "chain_reorganization"

const slotRef = (slot: bigint | number) => `slot:${slot}`

/** A token account the watcher reads: a merchant's (payments), a refund address's (refunds), or both. */
interface Target {
  readonly tokenAccount: string
  readonly recipient: string
  readonly mint: string
  readonly payments: boolean
  readonly refunds: ReadonlyArray<WatchedRefund>
}

/**
 * The Solana watcher. Solana has no logs to filter by token, and a payment is recognised by its
 * reference key, so instead of the block cursor of ChainWatcher it reads per token account: for
 * each merchant recipient's associated token account of each configured mint that has watched
 * options, the signatures since the last one processed (paged, newest first, per account and not
 * per invoice), then those transactions in batches, oldest first. A successful transaction that
 * carries a watched option's reference is evidence for that option; its amount is the account's
 * token balance change (pre/post token balances), not what an instruction claims. Confirmations are
 * the slot distance to the current slot at `confirmed` commitment, plus one; evidence that no longer
 * has a signature status is invalidated. Everything goes through PaymentEvidence, the one entry point.
 * Refund addresses' token accounts are read the same way, for the refunds' references (SolanaRefunds).
 */
export const makeSolanaWatcher = (options: SolanaWatcherOptions) =>
  Effect.gen(function*() {
    const { keys } = yield* WatchedOptionsRepo
    const chainRepo = yield* ChainRepo
    const evidence = yield* PaymentEvidence
    const settleReorgs = yield* makeReorgSettlement
    const repo = yield* makeSolanaRepo
    const refunds = yield* makeSolanaRefunds(options.client)
    const { client } = options
    const applied = options.onApplied ?? (() => Effect.void)
    const references = yield* makeWatchIndex({ networks: [NETWORK], key: keys.solanaReference, retentionMillis: options.retentionMillis })
    const accounts = yield* makeWatchIndex({
      networks: [NETWORK],
      key: keys.solanaRecipientAndMint,
      retentionMillis: options.retentionMillis
    })

    const rejected = (error: EvidenceRejected, signature: string) =>
      Effect.logWarning(`Evidence refused: ${error.reason}`).pipe(
        Effect.annotateLogs({ network: NETWORK, transactionHash: signature }),
        Effect.andThen(applied("rejected"))
      )

    const blockTimeOf = (slot: number) =>
      client.call("getBlockTime", (connection) => connection.getBlockTime(slot)).pipe(
        Effect.flatMap((time) =>
          time === null
            ? Effect.fail(new ChainRpcError({ network: NETWORK, message: `getBlockTime: no time for slot ${slot}` }))
            : Effect.succeed(new Date(time * 1000))
        )
      )

    /** New signatures of an account, newest first: back to the cursor (or, for a new account, the retention period). */
    const newSignatures = (account: PublicKey, cursor: AccountCursor | undefined, notBefore: number) =>
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

    const chainTimeOf = (transaction: VersionedTransactionResponse) =>
      transaction.blockTime != null ? Effect.succeed(new Date(transaction.blockTime * 1000)) : blockTimeOf(transaction.slot)

    /** Reads what one transaction moved into a merchant's token account: evidence, an unmatched deposit, or nothing of ours. */
    const observe = (
      transaction: VersionedTransactionResponse,
      signature: string,
      target: Target,
      receipt: TokenReceipt,
      headSlot: number
    ) =>
      Effect.gen(function*() {
        const { keys, accountIndex, mint, received } = receipt
        const matches: Array<{ readonly reference: string; readonly option: WatchedOption }> = []
        for (const key of new Set(keys)) for (const option of references.lookup(key) ?? []) matches.push({ reference: key, option })
        if (matches.length === 0) return "ignored" as const
        const memos = memosOf(transaction, keys)
        const memo = memos.length === 0 ? null : memos.join("\n")
        const chainTime = yield* chainTimeOf(transaction)
        const slot = BigInt(transaction.slot)
        let outcome: "evidence" | "unmatched" = "unmatched"
        for (const { reference, option } of matches) {
          const expectedMemo = `${options.servicePrefix}:${option.invoiceId}:${option.optionId}`
          if (memo !== expectedMemo) {
            yield* Effect.logWarning("Solana payment without the option's memo (the reference identifies it)").pipe(
              Effect.annotateLogs({ transactionHash: signature, optionId: option.optionId, memo: memo ?? "(none)" })
            )
          }
          const toThisRecipient = (accounts.lookup(`${target.recipient}:${target.mint}`) ?? []).some((entry) => entry.optionId === option.optionId)
          const reason = option.tokenContract !== mint ? "wrong_token" : toThisRecipient ? undefined : "wrong_recipient"
          if (reason === undefined) {
            const recorded = yield* evidence.record({
              paymentOptionId: option.optionId,
              transactionHash: signature,
              // The recipient token account's index in the transaction: one balance change per account.
              outputIndex: accountIndex,
              amountAtomic: received,
              confirmations: Math.max(1, headSlot - transaction.slot + 1),
              observedAt: chainTime,
              destinationAddress: target.recipient,
              blockHeight: slot,
              blockHash: slotRef(slot)
            }).pipe(
              Effect.as(true),
              Effect.tap(() => applied("evidence")),
              Effect.catchTag("EvidenceRejected", (error) => rejected(error, signature).pipe(Effect.as(false)))
            )
            yield* repo.recordTransfer({
              signature,
              tokenAccount: target.tokenAccount,
              slot,
              blockTime: chainTime,
              reference,
              paymentOptionId: option.optionId,
              mint,
              amountAtomic: received,
              memo,
              outcome: recorded ? "evidence" : "refused"
            })
            if (recorded) outcome = "evidence"
            continue
          }
          yield* chainRepo.recordUnmatched({
            merchantId: option.merchantId,
            invoiceId: option.invoiceId,
            network: NETWORK,
            assetCode: options.mints.get(mint) ?? "unknown",
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
          yield* repo.recordTransfer({
            signature,
            tokenAccount: target.tokenAccount,
            slot,
            blockTime: chainTime,
            reference,
            paymentOptionId: option.optionId,
            mint,
            amountAtomic: received,
            memo,
            outcome: reason
          })
          yield* Effect.logWarning("Unmatched Solana deposit carrying an option's reference").pipe(
            Effect.annotateLogs({ invoiceId: option.invoiceId, reason, transactionHash: signature })
          )
          yield* applied("unmatched")
        }
        return outcome
      })

    /** Reads an account's transactions since its cursor, or (`since`) again from a given signature and slot without moving the cursor. */
    const scanAccount = (target: Omit<Target, "tokenAccount">, headSlot: number, notBefore: number, since?: AccountCursor) =>
      Effect.gen(function*() {
        const counts = { evidence: 0, unmatched: 0, refundsSeen: 0 }
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
        const cursor = since ?? (yield* repo.cursor(tokenAccount))
        const { found, newest } = yield* newSignatures(account, cursor, notBefore)
        const successful = found.filter((info) => info.err === null).reverse()
        for (let start = 0; start < successful.length; start += TRANSACTION_BATCH) {
          const batch = successful.slice(start, start + TRANSACTION_BATCH).map((info) => info.signature)
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
            if (taken && client.several) {
              const verdict = yield* corroborateReceipt(client, reporter, { signature: batch[index], tokenAccount, receipt, transaction })
              // Not confirmed by another endpoint: not credited, and the account's cursor stays, so the next poll
              // reads it again from there (from an endpoint not marked disagreeing).
              if (verdict !== "confirmed") return counts
            }
            if (refund !== undefined) {
              refundsPaid.add(refund.refundId)
              yield* refunds.observe(refund, batch[index], receipt, transaction.slot, yield* chainTimeOf(transaction), headSlot)
              counts.refundsSeen++
            }
            // A transaction that pays a refund is never also a payment.
            if (refund !== undefined || !target.payments) continue
            const outcome = yield* observe(transaction, batch[index], { ...target, tokenAccount }, receipt, headSlot)
            if (outcome !== "ignored") counts[outcome]++
          }
        }
        if (since === undefined && newest !== undefined && newest.signature !== cursor?.signature) {
          yield* repo.saveCursor(tokenAccount, { signature: newest.signature, slot: BigInt(newest.slot) })
        }
        return counts
      })

    /** Confirmations of open evidence from the current slot; evidence whose transaction is gone is invalidated. */
    const confirm = (headSlot: number) =>
      Effect.gen(function*() {
        const awaiting = yield* chainRepo.awaitingConfirmation(NETWORK)
        let confirmationsUpdated = 0
        let invalidated = 0
        const statuses = yield* signatureStatuses(client, awaiting.map((known) => known.transactionHash))
        for (const [index, known] of awaiting.entries()) {
          const status = statuses[index]
          if (status === null) {
            // Double-check before invalidating, with every endpoint: a failover to a node without this
            // history must not drop a real payment. Gone means unknown to all of them; while one does
            // not answer, the evidence stays as it is until a later poll.
            if ((yield* goneFromChain(client, known.transactionHash)) !== true) continue
            yield* evidence.invalidate({
              network: NETWORK,
              transactionHash: known.transactionHash,
              outputIndex: known.outputIndex,
              reason: DROPPED,
              reorgPoint: known.blockHeight - 1n
            }).pipe(
              Effect.andThen(applied("invalidated")),
              Effect.catchTag("EvidenceRejected", (error) => rejected(error, known.transactionHash))
            )
            yield* repo.invalidateUnmatched(NETWORK, known.transactionHash, DROPPED)
            yield* Effect.logWarning("Solana transaction left the chain; its evidence is invalidated").pipe(
              Effect.annotateLogs({ transactionHash: known.transactionHash })
            )
            invalidated++
            continue
          }
          const confirmations = Math.max(1, headSlot - status.slot + 1)
          if (confirmations <= known.confirmations) continue
          yield* evidence.record({ ...known, confirmations }).pipe(
            Effect.catchTag("EvidenceRejected", (error) => rejected(error, known.transactionHash))
          )
          confirmationsUpdated++
        }
        return { confirmationsUpdated, invalidated }
      })

    /** The merchants' token accounts with watched options and the refund addresses' ones with watched refunds, each once. */
    const targets = (watchedRefunds: ReadonlyArray<WatchedRefund>) => {
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

    let publishedEndpoints: string | undefined
    /** The endpoints' states, written when they changed (as ChainWatcher does for the other families). */
    const publishEndpoints = Effect.gen(function*() {
      const report = JSON.stringify(yield* client.endpoints)
      if (report === publishedEndpoints) return
      yield* chainRepo.saveEndpoints(NETWORK, report)
      publishedEndpoints = report
    })

    const poll = Effect.gen(function*() {
      const headSlot = yield* client.slot
      const headTime = yield* blockTimeOf(headSlot)
      yield* references.refresh
      yield* accounts.refresh
      const notBefore = (yield* Clock.currentTimeMillis) - options.retentionMillis
      const counts = { evidence: 0, unmatched: 0, refundsSeen: 0 }
      // Before the scan: a refund whose transaction left the chain is requested again when its next payer is read.
      const refundsConfirmed = yield* refunds.confirm(headSlot)
      const watchedRefunds = yield* refunds.watched
      for (const dropped of refundsConfirmed.dropped) {
        // A transfer read while the refund was bound to the dropped one was passed by: its account is read again from there.
        const refund = watchedRefunds.find((watched) => watched.refundId === dropped.refundId)
        if (refund === undefined || !options.mints.has(refund.token)) continue
        const since = { signature: dropped.transactionHash, slot: dropped.blockHeight }
        const scanned = yield* scanAccount({ recipient: refund.toAddress, mint: refund.token, payments: false, refunds: [refund] }, headSlot, notBefore, since)
        counts.refundsSeen += scanned.refundsSeen
      }
      for (const target of targets(watchedRefunds)) {
        const scanned = yield* scanAccount(target, headSlot, notBefore)
        counts.evidence += scanned.evidence
        counts.unmatched += scanned.unmatched
        counts.refundsSeen += scanned.refundsSeen
      }
      const { confirmationsUpdated, invalidated } = yield* confirm(headSlot)
      yield* settleReorgs(NETWORK, BigInt(headSlot), rejected)
      // Every watched account has been read up to the head: chain time is the head slot's block time.
      const cursor = { height: BigInt(headSlot), hash: slotRef(headSlot), chainTime: headTime }
      yield* chainRepo.saveProgress(NETWORK, { cursor, headHeight: BigInt(headSlot), headTime })
      return {
        network: NETWORK,
        headHeight: BigInt(headSlot),
        processedHeight: BigInt(headSlot),
        evidence: counts.evidence,
        unmatched: counts.unmatched,
        invalidated,
        confirmationsUpdated: confirmationsUpdated + refundsConfirmed.updated,
        mempoolSeen: 0,
        refundsSeen: counts.refundsSeen,
        refundsReverted: refundsConfirmed.reverted
      } satisfies PollReport
    }).pipe(Effect.ensuring(publishEndpoints), Effect.withSpan("SolanaWatcher.poll"))

    const watcher: ChainWatcher = { network: NETWORK, poll }
    return watcher
  })
