import { Effect } from "effect"
import { Agent, request } from "undici"
import {
  type BlockHeader,
  type ChainSource,
  ChainRpcError,
  type MempoolSource,
  type PayableKeys,
  type PendingTransfer,
  type Transfer,
  type TransactionPlace
} from "../source/ChainSource.ts"
import type { SeenTransfer } from "../source/Corroboration.ts"
import { retryAfterMillis } from "../source/EndpointSelection.ts"
import { parseBlockOutputs } from "./RawBlock.ts"

export interface EsploraSourceOptions {
  readonly baseUrl: string
  readonly timeoutMs: number
  /** Most blocks read in one scan: the watcher saves its cursor between scans. */
  readonly maxBlocksPerScan?: number
  /** Most requests for mempool transactions at once. */
  readonly mempoolConcurrency?: number
  /**
   * Up to this many payable addresses the mempool is read per address; above it, by a diff of the
   * whole mempool's transaction ids (a cost that does not grow with open invoices).
   */
  readonly perAddressLimit?: number
  /** A signet API (the testnet watcher's): raw blocks' addresses are read in signet's encoding (`tb1…`). */
  readonly signet?: boolean | undefined
}

const NETWORK = "bitcoin"
const PAGE = 25

/** The transaction JSON of Esplora, as far as the watcher reads it. */
interface EsploraTx {
  readonly txid: string
  readonly vout: ReadonlyArray<{ readonly scriptpubkey_address?: string; readonly value: number }>
}

class NotFound {
  readonly _tag = "NotFound"
}

class RateLimited extends Error {
  readonly retryAfterMs: number | undefined
  constructor(retryAfterMs: number | undefined) {
    super("HTTP 429")
    this.retryAfterMs = retryAfterMs
  }
}

type MempoolOutputs = Map<string, ReadonlyArray<{ readonly address: string; readonly index: number; readonly value: bigint }>>

/** One Esplora API: its HTTP agent and what is learnt from it as it is read. */
interface Esplora {
  readonly base: string
  readonly timeoutMs: number
  readonly dispatcher: Agent
  /** Block headers by hash (they never change). */
  readonly headers: Map<string, BlockHeader>
  /** Outputs of the mempool's transactions seen by the diff so far, by txid. */
  mempoolOutputs: MempoolOutputs
  /** False once the API answered that it serves no raw blocks. */
  rawBlocks: boolean
  readonly signet: boolean
}

const get = (esplora: Esplora, path: string) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await request(`${esplora.base}${path}`, {
        dispatcher: esplora.dispatcher,
        signal: AbortSignal.any([signal, AbortSignal.timeout(esplora.timeoutMs)])
      })
      if (response.statusCode === 404) {
        await response.body.dump()
        return new NotFound()
      }
      if (response.statusCode === 429) {
        await response.body.dump()
        const retryAfter = response.headers["retry-after"]
        throw new RateLimited(retryAfterMillis(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()))
      }
      if (response.statusCode !== 200) {
        const text = (await response.body.text()).slice(0, 200)
        throw new Error(`HTTP ${response.statusCode}${text === "" ? "" : `: ${text}`}`)
      }
      return response.body
    },
    catch: (error) =>
      new ChainRpcError({
        network: NETWORK,
        message: `GET ${path}: ${error instanceof Error ? error.message : String(error)}`,
        ...(error instanceof RateLimited ? { rateLimited: true, retryAfterMs: error.retryAfterMs } : {})
      })
  })

const text = (esplora: Esplora, path: string) =>
  Effect.flatMap(get(esplora, path), (body) =>
    body instanceof NotFound ? Effect.succeed(undefined) : Effect.tryPromise({
      try: () => body.text(),
      catch: (error) => new ChainRpcError({ network: NETWORK, message: `GET ${path}: ${String(error)}` })
    }))

const json = <A>(esplora: Esplora, path: string) =>
  Effect.flatMap(text(esplora, path), (body) =>
    body === undefined ? Effect.succeed(undefined) : Effect.try({
      try: () => JSON.parse(body) as A,
      catch: () => new ChainRpcError({ network: NETWORK, message: `GET ${path}: not JSON` })
    }))

const required = <A>(path: string, found: A | undefined) =>
  found === undefined ? Effect.fail(new ChainRpcError({ network: NETWORK, message: `GET ${path}: not found` })) : Effect.succeed(found)

const header = (esplora: Esplora, hash: string) =>
  Effect.gen(function*() {
    const cached = esplora.headers.get(hash)
    if (cached !== undefined) return cached
    const path = `/block/${hash}`
    const block = yield* Effect.flatMap(json<{ height: number; timestamp: number }>(esplora, path), (found) => required(path, found))
    const parsed: BlockHeader = { height: BigInt(block.height), hash, time: new Date(block.timestamp * 1000) }
    if (esplora.headers.size > 2_000) esplora.headers.clear()
    esplora.headers.set(hash, parsed)
    return parsed
  })

const hashAt = (esplora: Esplora, height: bigint) => Effect.map(text(esplora, `/block-height/${height}`), (hash) => hash?.trim())

const blockAt = (esplora: Esplora, height: bigint) => Effect.flatMap(hashAt(esplora, height), (hash) => (hash === undefined ? Effect.succeed(undefined) : header(esplora, hash)))

const headOf = (esplora: Esplora) =>
  Effect.gen(function*() {
    const hash = yield* Effect.flatMap(text(esplora, "/blocks/tip/hash"), (found) => required("/blocks/tip/hash", found))
    return yield* header(esplora, hash.trim())
  })

/** Every output with an address, from the raw block (one request), or from the JSON pages. */
const outputsOf = (esplora: Esplora, block: BlockHeader, txCount: () => Effect.Effect<number, ChainRpcError>) =>
  Effect.gen(function*() {
    if (esplora.rawBlocks) {
      const path = `/block/${block.hash}/raw`
      const body = yield* get(esplora, path)
      if (!(body instanceof NotFound)) {
        const bytes = yield* Effect.tryPromise({
          try: () => body.bytes(),
          catch: (error) => new ChainRpcError({ network: NETWORK, message: `GET ${path}: ${String(error)}` })
        })
        return yield* Effect.try({
          try: () => parseBlockOutputs(bytes, block.hash, esplora.signet),
          catch: (error) => new ChainRpcError({ network: NETWORK, message: `block ${block.hash}: ${String(error)}` })
        })
      }
      // This API serves no raw blocks: read the JSON pages from now on.
      esplora.rawBlocks = false
    }
    const count = yield* txCount()
    const pages = yield* Effect.forEach(
      Array.from({ length: Math.ceil(count / PAGE) }, (_, page) => page * PAGE),
      (start) => {
        const path = `/block/${block.hash}/txs/${start}`
        return Effect.flatMap(json<ReadonlyArray<EsploraTx>>(esplora, path), (found) => required(path, found))
      },
      { concurrency: 4 }
    )
    return pages.flat().flatMap((tx) =>
      tx.vout.flatMap((out, index) => out.scriptpubkey_address === undefined ? [] : [{ txid: tx.txid, index, address: out.scriptpubkey_address, value: BigInt(out.value) }])
    )
  })

const scanBlocks = (esplora: Esplora, maxBlocks: bigint, from: bigint, to: bigint) =>
  Effect.gen(function*() {
    const end = to - from + 1n > maxBlocks ? from + maxBlocks - 1n : to
    const transfers: Array<Transfer> = []
    for (let height = from; height <= end; height++) {
      const hash = yield* Effect.flatMap(hashAt(esplora, height), (found) => required(`/block-height/${height}`, found))
      const found = yield* header(esplora, hash)
      const txCount = () =>
        Effect.flatMap(json<{ tx_count: number }>(esplora, `/block/${hash}`), (info) => required(`/block/${hash}`, info)).pipe(Effect.map((info) => info.tx_count))
      for (const output of yield* outputsOf(esplora, found, txCount)) {
        transfers.push({
          transactionHash: output.txid,
          outputIndex: output.index,
          blockHeight: found.height,
          blockHash: found.hash,
          token: "",
          key: output.address,
          toAddress: output.address,
          amountAtomic: output.value
        })
      }
    }
    return { to: end, transfers }
  })

const outputsOfTx = (tx: EsploraTx) =>
  tx.vout.flatMap((out, index) => (out.scriptpubkey_address === undefined ? [] : [{ address: out.scriptpubkey_address, index, value: BigInt(out.value) }]))

/** The whole mempool's txids, and each new transaction once: about one request per new transaction. */
const mempoolDiff = (esplora: Esplora, concurrency: number, keys: PayableKeys) =>
  Effect.gen(function*() {
    const txids = yield* Effect.flatMap(json<ReadonlyArray<string>>(esplora, "/mempool/txids"), (found) => required("/mempool/txids", found))
    const next: MempoolOutputs = new Map()
    const fresh: Array<string> = []
    for (const txid of txids) {
      const known = esplora.mempoolOutputs.get(txid)
      if (known === undefined) fresh.push(txid)
      else next.set(txid, known)
    }
    yield* Effect.forEach(fresh, (txid) =>
      Effect.map(json<EsploraTx>(esplora, `/tx/${txid}`), (tx) => {
        // Gone since the list was read (mined or replaced): the next poll sees where it went.
        // Only outputs to addresses handed out by now are kept: a payment follows its address.
        if (tx !== undefined) next.set(txid, outputsOfTx(tx).filter((output) => keys.has(output.address)))
      }), { concurrency, discard: true })
    esplora.mempoolOutputs = next
    const pending: Array<PendingTransfer> = []
    for (const [txid, outputs] of next) {
      for (const output of outputs) {
        if (!keys.has(output.address)) continue
        pending.push({ transactionHash: txid, outputIndex: output.index, token: "", key: output.address, toAddress: output.address, amountAtomic: output.value })
      }
    }
    return pending
  })

const perAddress = (esplora: Esplora, concurrency: number, keys: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(keys, (address) => {
      const path = `/address/${address}/txs/mempool`
      return Effect.map(json<ReadonlyArray<EsploraTx>>(esplora, path), (txs) =>
        (txs ?? []).flatMap((tx) =>
          tx.vout.flatMap((out, index): Array<PendingTransfer> =>
            out.scriptpubkey_address === address
              ? [{ transactionHash: tx.txid, outputIndex: index, token: "", key: address, toAddress: address, amountAtomic: BigInt(out.value) }]
              : []
          )
        ))
    }, { concurrency }),
    (lists) => lists.flat()
  )

const mempoolOf = (esplora: Esplora, concurrency: number, perAddressLimit: number): MempoolSource => ({
  pending: (keys) => {
    const few = keys.some(perAddressLimit + 1)
    return Effect.map(few.length <= perAddressLimit ? perAddress(esplora, concurrency, few) : mempoolDiff(esplora, concurrency, keys), (transfers) => ({ transfers }))
  },
  place: (txid) =>
    Effect.map(json<{ confirmed: boolean }>(esplora, `/tx/${txid}/status`), (status): TransactionPlace => status === undefined ? "unknown" : status.confirmed ? "mined" : "mempool")
})

/** A transaction's outputs and the block it is in (`GET /tx/:txid` carries its status), to corroborate another endpoint. */
const transfersOf = (esplora: Esplora, txid: string) =>
  Effect.map(
    json<EsploraTx & { readonly status?: { readonly confirmed: boolean; readonly block_hash?: string } }>(esplora, `/tx/${txid}`),
    (tx): ReadonlyArray<SeenTransfer> | undefined =>
      tx === undefined ? undefined : outputsOfTx(tx).map((output) => ({
        transactionHash: tx.txid,
        outputIndex: output.index,
        token: "",
        toAddress: output.address,
        amountAtomic: output.value,
        blockHash: tx.status?.confirmed === true ? tx.status.block_hash : undefined
      }))
  )

/**
 * Bitcoin through an Esplora-compatible REST API (electrs, Blockstream esplora, mempool.space).
 * A block costs one request: its raw bytes, parsed here (`/block/:hash/raw`); an API without raw
 * blocks is read through the JSON pages of 25 transactions instead. Block headers are cached by
 * hash (they never change). The mempool is read per payable address while there are few; with
 * more, by a diff of the mempool's txids that fetches each new transaction once.
 */
export const makeEsploraSource = (options: EsploraSourceOptions): ChainSource => {
  const esplora: Esplora = {
    base: options.baseUrl.replace(/\/+$/, ""),
    timeoutMs: options.timeoutMs,
    dispatcher: new Agent({ connections: 16, keepAliveTimeout: 30_000, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs }),
    headers: new Map(),
    mempoolOutputs: new Map(),
    rawBlocks: true,
    signet: options.signet ?? false
  }
  const maxBlocks = BigInt(options.maxBlocksPerScan ?? 12)
  const concurrency = options.mempoolConcurrency ?? 8
  const perAddressLimit = options.perAddressLimit ?? 50
  return {
    network: NETWORK,
    head: headOf(esplora),
    block: (height) => blockAt(esplora, height),
    scan: (from, to) => scanBlocks(esplora, maxBlocks, from, to),
    // Bitcoin options are BTC only: any output to a watched address pays its option.
    classify: (_transfer, entries) => ({ _tag: "Evidence", option: entries[0] }),
    mempool: mempoolOf(esplora, concurrency, perAddressLimit),
    blockHash: (height) => hashAt(esplora, height),
    transfersOf: (txid) => transfersOf(esplora, txid)
  }
}
