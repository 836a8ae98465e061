import { Effect } from "effect"
import { type EvidenceRejected, PaymentEvidence } from "../../invoices/PaymentEvidence.ts"
import type { WatchedRefund } from "../../refunds/RefundWatch.ts"
import { ChainRepo } from "../watcher/ChainRepo.ts"
import type { WatchScope } from "../watcher/WatchScope.ts"
import { ChainRpcError } from "../source/ChainSource.ts"
import { makeWatchIndex, type WatchIndex } from "../watcher/WatchedOptions.ts"
import { WatchedOptionsRepo } from "../watcher/WatchedOptionsRepo.ts"
import { makeReorgSettlement } from "../watcher/ReorgSettlement.ts"
import { NETWORK, type SolanaRpcClient } from "./SolanaCluster.ts"
import { makeSolanaRefunds } from "./SolanaRefunds.ts"
import { makeSolanaRepo } from "./SolanaRepo.ts"
import type { VersionedTransactionResponse } from "@solana/web3.js"

export interface SolanaWatcherOptions {
  readonly client: SolanaRpcClient
  /** The configured mints: address → asset code. */
  readonly mints: ReadonlyMap<string, string>
  /** `<prefix>` of the memos the service writes (`<prefix>:<invoice_id>:<option_id>`). */
  readonly servicePrefix: string
  /** How long after their payable window options stay watched; also how far back a new account is read. */
  readonly retentionMillis: number
  /** Live invoices only (the mainnet watcher) or test invoices only (the devnet watcher). */
  readonly livemode: boolean
  /** The slots deep a watched account's signatures are read again from another endpoint (the required confirmations). */
  readonly rescanDepth?: number
  /** How long a transfer may wait for corroboration before a warning names it (default 10 minutes). */
  readonly waitingWarningMs?: number | undefined
  readonly onApplied?: (outcome: "evidence" | "unmatched" | "invalidated" | "rejected") => Effect.Effect<void>
}

/** A token account the watcher reads: a merchant's (payments), a refund address's (refunds), or both. */
export interface Target {
  readonly tokenAccount: string
  readonly recipient: string
  readonly mint: string
  readonly payments: boolean
  readonly refunds: ReadonlyArray<WatchedRefund>
}

export const slotRef = (slot: bigint | number) => `slot:${slot}`

/** What every step of the Solana watcher (SolanaWatcher.ts) works with: the cluster, the indexes, the repositories. */
export interface SolanaWatcherContext {
  readonly options: SolanaWatcherOptions
  /** Solana's live watcher or its devnet one (test invoices): what ChainRepo's state and evidence are read for. */
  readonly scope: WatchScope
  readonly client: SolanaRpcClient
  readonly chainRepo: ChainRepo["Service"]
  readonly evidence: PaymentEvidence["Service"]
  readonly settleReorgs: Effect.Success<typeof makeReorgSettlement>
  readonly repo: Effect.Success<ReturnType<typeof makeSolanaRepo>>
  readonly refunds: Effect.Success<ReturnType<typeof makeSolanaRefunds>>
  /** Watched options by reference key. */
  readonly references: WatchIndex
  /** Watched options by `<recipient>:<mint>`. */
  readonly accounts: WatchIndex
  readonly applied: (outcome: "evidence" | "unmatched" | "invalidated" | "rejected") => Effect.Effect<void>
  /** Logs a refusal of PaymentEvidence (and counts it); the poll goes on. */
  readonly rejected: (error: EvidenceRejected, signature: string) => Effect.Effect<void>
}

export const makeSolanaWatcherContext = (options: SolanaWatcherOptions) =>
  Effect.gen(function*() {
    const { keys } = yield* WatchedOptionsRepo
    const chainRepo = yield* ChainRepo
    const evidence = yield* PaymentEvidence
    const settleReorgs = yield* makeReorgSettlement
    const repo = yield* makeSolanaRepo(options.livemode)
    const refunds = yield* makeSolanaRefunds(options.client, options.livemode)
    const { client } = options
    const applied = options.onApplied ?? (() => Effect.void)
    const references = yield* makeWatchIndex({
      networks: [NETWORK],
      key: keys.solanaReference,
      livemode: options.livemode,
      retentionMillis: options.retentionMillis
    })
    const accounts = yield* makeWatchIndex({
      networks: [NETWORK],
      key: keys.solanaRecipientAndMint,
      livemode: options.livemode,
      retentionMillis: options.retentionMillis
    })

    const rejected = (error: EvidenceRejected, signature: string) =>
      Effect.logWarning(`Evidence refused: ${error.reason}`).pipe(
        Effect.annotateLogs({ network: NETWORK, livemode: options.livemode, transactionHash: signature }),
        Effect.andThen(applied("rejected"))
      )

    const context: SolanaWatcherContext = {
      options,
      scope: { network: NETWORK, livemode: options.livemode },
      client,
      chainRepo,
      evidence,
      settleReorgs,
      repo,
      refunds,
      references,
      accounts,
      applied,
      rejected
    }
    return context
  })

export const blockTimeOf = (client: SolanaRpcClient, slot: number) =>
  client.call("getBlockTime", (connection) => connection.getBlockTime(slot)).pipe(
    Effect.flatMap((time) =>
      time === null
        ? Effect.fail(new ChainRpcError({ network: NETWORK, message: `getBlockTime: no time for slot ${slot}` }))
        : Effect.succeed(new Date(time * 1000))
    )
  )

export const chainTimeOf = (client: SolanaRpcClient, transaction: VersionedTransactionResponse) =>
  transaction.blockTime != null ? Effect.succeed(new Date(transaction.blockTime * 1000)) : blockTimeOf(client, transaction.slot)
