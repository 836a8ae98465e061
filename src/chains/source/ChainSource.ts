import { Data, type Effect } from "effect"
import type { Reported, ReportedTransfer, SeenTransfer, Verdict } from "./Corroboration.ts"
import type { EndpointsReport } from "./EndpointSelection.ts"
import type { WatchedOption } from "./WatchedOption.ts"

/** A block as the watcher needs it: where it is, which one it is, and its chain time. */
export interface BlockHeader {
  readonly height: bigint
  readonly hash: string
  readonly time: Date
}

/** One transfer found in a block: its evidence identity, where it was mined, and what it moved where. */
export interface Transfer {
  readonly transactionHash: string
  /** The log's position within its transaction (EVM, see LogPosition.ts), output index (bitcoin) or instruction index (solana). */
  readonly outputIndex: number
  readonly blockHeight: bigint
  readonly blockHash: string
  /** Token contract or mint (lower-case for EVM); empty for the chain's native asset. */
  readonly token: string
  /** What the watched index is keyed by: the receiving address (EVM, bitcoin) or the reference (solana). */
  readonly key: string
  readonly toAddress: string
  readonly amountAtomic: bigint
  /** The sender, when the chain names one (EVM: the Transfer's `from`). */
  readonly fromAddress?: string | undefined
}

/** What a transfer to a watched key is: evidence for one option, or a deposit that matches none. */
export type Classified =
  | { readonly _tag: "Evidence"; readonly option: WatchedOption }
  | {
    readonly _tag: "Unmatched"
    readonly entry: WatchedOption
    readonly assetCode: string
    readonly reason: "wrong_token" | "wrong_network"
  }

/** An unconfirmed transfer to a watched key, seen in the node's mempool. */
export interface PendingTransfer {
  readonly transactionHash: string
  readonly outputIndex: number
  readonly token: string
  readonly key: string
  readonly toAddress: string
  readonly amountAtomic: bigint
}

/** Where an unconfirmed transaction is now: still waiting, mined, or gone (replaced or evicted). */
export type TransactionPlace = "mempool" | "mined" | "unknown"

/** The keys a mempool watch looks for, without listing them all when there are many. */
export interface PayableKeys {
  /** Up to `limit` of them. */
  readonly some: (limit: number) => ReadonlyArray<string>
  readonly has: (key: string) => boolean
}

/** A chain whose unconfirmed transactions can be watched (bitcoin): 0-confirmation detection. */
export interface MempoolSource {
  /** Unconfirmed transfers paying any of the payable keys. */
  readonly pending: (keys: PayableKeys) => Effect.Effect<Reported<PendingTransfer>, ChainRpcError>
  readonly place: (transactionHash: string) => Effect.Effect<TransactionPlace, ChainRpcError>
}

export class ChainRpcError extends Data.TaggedError("ChainRpcError")<{
  readonly network: string
  readonly message: string
  /** The endpoint answered HTTP 429. */
  readonly rateLimited?: boolean | undefined
  /** Its Retry-After, in ms. */
  readonly retryAfterMs?: number | undefined
}> {}

/** What a scan read: up to which height, and the transfers (with their corroboration, with several endpoints). */
export interface Scanned extends Reported<Transfer> {
  readonly to: bigint
}

/**
 * The protocol of one chain family, as the shared watcher loop uses it: the head, a block by
 * height, and the transfers of a range of blocks. A family module (chains/evm, ...) implements it.
 */
export interface ChainSource {
  readonly network: string
  readonly head: Effect.Effect<BlockHeader, ChainRpcError>
  /** The block at `height` on the node's current chain; undefined when the node has none there. */
  readonly block: (height: bigint) => Effect.Effect<BlockHeader | undefined, ChainRpcError>
  /**
   * Transfers of the watched tokens in blocks `from`..`to`; the source may cover less than asked
   * (a provider's range limit) and says up to which height it did.
   */
  readonly scan: (from: bigint, to: bigint) => Effect.Effect<Scanned, ChainRpcError>
  /** Which option (if any) a transfer to a watched key pays, given the options watched under that key. */
  readonly classify: (transfer: Pick<Transfer, "token">, entries: ReadonlyArray<WatchedOption>) => Classified
  /** Present where unconfirmed transactions are watched too. */
  readonly mempool?: MempoolSource
  /** The hash of the block at `height`, where the source can read it cheaper than `block`. */
  readonly blockHash?: (height: bigint) => Effect.Effect<string | undefined, ChainRpcError>
  /**
   * One transaction's transfers as this endpoint sees it (an EVM receipt, an Esplora transaction):
   * how another endpoint's report is corroborated. Undefined when it knows no such transaction.
   */
  readonly transfersOf?: (transactionHash: string) => Effect.Effect<ReadonlyArray<SeenTransfer> | undefined, ChainRpcError>
  /**
   * With several endpoints: a transfer recorded earlier without corroboration (`reporter` is the
   * label of the endpoint that reported it) asked again of every endpoint, the reporter included.
   */
  readonly recheck?: (transfer: ReportedTransfer, reporter: string) => Effect.Effect<Verdict>
  /** With several endpoints: blocks `from`..`to` read again from another endpoint than reads go to (undefined: none usable). */
  readonly rescan?: (from: bigint, to: bigint) => Effect.Effect<Scanned | undefined>
  /**
   * With several endpoints: once an endpoint a majority outvoted is usable again, the blocks scanned
   * while it was out (up to `to`) read from it (undefined: none is back, or nothing to read).
   */
  readonly rereadReturning?: (to: bigint) => Effect.Effect<Scanned | undefined>
  /** Present when the source reads from several endpoints: their states, to publish. */
  readonly endpoints?: Effect.Effect<EndpointsReport>
}
