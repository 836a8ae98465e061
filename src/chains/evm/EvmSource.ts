import { Effect } from "effect"
import {
  type Address,
  BaseError,
  BlockNotFoundError,
  createPublicClient,
  type Hash,
  http,
  HttpRequestError,
  parseAbiItem,
  parseEventLogs,
  TransactionReceiptNotFoundError
} from "viem"
import { type BlockHeader, type ChainSource, ChainRpcError, type Classified, type Transfer } from "../source/ChainSource.ts"
import type { SeenTransfer } from "../source/Corroboration.ts"
import { retryAfterMillis } from "../source/EndpointSelection.ts"
import type { WatchedOption } from "../source/WatchedOption.ts"
import { positionsInTransaction } from "./LogPosition.ts"

const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")

export interface EvmSourceOptions {
  readonly network: string
  readonly rpcUrl: string
  /** The network's configured token contracts: lower-case address → asset code. */
  readonly tokens: ReadonlyMap<string, string>
  readonly maxLogRange: number
  readonly timeoutMs: number
  /** The chain id the endpoint must answer before it is read (a testnet watcher's: its testnet's); absent: not checked. */
  readonly chainId?: number | undefined
}

const messageOf = (error: unknown) => error instanceof Error ? (error as Error & { shortMessage?: string }).shortMessage ?? error.message : String(error)

/** A failed call as a ChainRpcError that says whether the provider rate-limited it (HTTP 429) and for how long. */
const rpcError = (network: string, what: string, error: unknown) => {
  const http = error instanceof HttpRequestError ? error : error instanceof BaseError ? error.walk((cause) => cause instanceof HttpRequestError) : null
  const rateLimited = http instanceof HttpRequestError && http.status === 429
  return new ChainRpcError({
    network,
    message: `${what}: ${messageOf(error)}`,
    ...(rateLimited ? { rateLimited, retryAfterMs: retryAfterMillis(http.headers?.get("retry-after"), Date.now()) } : {})
  })
}

const blockHeaderOf = (
  network: string,
  block: { number: bigint | null; hash: string | null; timestamp: bigint }
): Effect.Effect<BlockHeader, ChainRpcError> =>
  block.number === null || block.hash === null
    ? Effect.fail(new ChainRpcError({ network, message: "the node answered a pending block" }))
    : Effect.succeed({ height: block.number, hash: block.hash.toLowerCase(), time: new Date(Number(block.timestamp) * 1000) })

/** Evidence for the option of this network and token; otherwise an unmatched transfer, with why. */
const classifyTransfer = (options: EvmSourceOptions, transfer: Pick<Transfer, "token">, entries: ReadonlyArray<WatchedOption>): Classified => {
  const { network } = options
  const option = entries.find((entry) => entry.network === network && entry.tokenContract?.toLowerCase() === transfer.token)
  if (option !== undefined) return { _tag: "Evidence", option }
  return {
    _tag: "Unmatched",
    entry: entries[0],
    assetCode: options.tokens.get(transfer.token) ?? "unknown",
    reason: entries.some((entry) => entry.network === network) ? "wrong_token" : "wrong_network"
  }
}

/**
 * An EVM network read through JSON-RPC with viem: `eth_getLogs` for the ERC-20 `Transfer` event
 * of the configured token contracts only (one filter for all invoices) over a bounded block range
 * that halves when the provider refuses it and grows back after successes; `to` is matched in
 * memory by the watcher. Requests are batched and time out; retries are the watcher's back-off.
 */
export const makeEvmSource = (options: EvmSourceOptions): ChainSource => {
  const { network } = options
  const client = createPublicClient({
    transport: http(options.rpcUrl, { timeout: options.timeoutMs, retryCount: 0, batch: { wait: 0 } })
  })
  const tokenAddresses = [...options.tokens.keys()] as Array<Address>
  let range = BigInt(options.maxLogRange)

  const attempt = <A>(what: string, run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: (error) => rpcError(network, what, error) })
  // Checked until it answers the expected id once: an endpoint of another chain is never read (it fails every call).
  let chainChecked = options.chainId === undefined
  const checkChain = Effect.suspend(() =>
    chainChecked ? Effect.void : attempt("eth_chainId", () => client.getChainId()).pipe(
      Effect.flatMap((answered) => {
        if (answered !== options.chainId) {
          return Effect.fail(new ChainRpcError({ network, message: `the endpoint answers chain id ${answered}, not ${options.chainId}` }))
        }
        chainChecked = true
        return Effect.void
      })
    )
  )
  const call = <A>(what: string, run: () => Promise<A>) => Effect.andThen(checkChain, attempt(what, run))

  const block = (height: bigint) =>
    Effect.andThen(checkChain, Effect.tryPromise({
      try: () => client.getBlock({ blockNumber: height }),
      catch: (error) => error
    }).pipe(
      Effect.flatMap((found) =>
        found.number !== height
          ? Effect.fail(new ChainRpcError({ network, message: `asked for block ${height}, got ${found.number}` }))
          : blockHeaderOf(network, found)
      ),
      Effect.catch((error) =>
        error instanceof ChainRpcError
          ? Effect.fail(error)
          : error instanceof BlockNotFoundError
          ? Effect.succeed(undefined)
          : Effect.fail(rpcError(network, "eth_getBlockByNumber", error))
      )
    ))

  const logsIn = (from: bigint, to: bigint) => call("eth_getLogs", () => client.getLogs({ address: tokenAddresses, event: TRANSFER, fromBlock: from, toBlock: to, strict: true }))

  const scan = (from: bigint, to: bigint) =>
    Effect.gen(function*() {
      if (tokenAddresses.length === 0) return { to, transfers: [] }
      while (true) {
        const end = to - from + 1n > range ? from + range - 1n : to
        const result = yield* Effect.result(logsIn(from, end))
        if (result._tag === "Failure") {
          // Providers cap a request's block range or result count: ask for less until one block fails alone.
          // A rate limit is not about the range: another endpoint is asked instead.
          if (end === from || result.failure.rateLimited === true) return yield* Effect.fail(result.failure)
          range = (end - from + 1n) / 2n
          continue
        }
        if (range < BigInt(options.maxLogRange)) range = range * 2n > BigInt(options.maxLogRange) ? BigInt(options.maxLogRange) : range * 2n
        const logs = result.success.flatMap((log) =>
          log.removed || log.blockNumber === null || log.blockHash === null || log.transactionHash === null || log.logIndex === null
            ? []
            : [{ ...log, blockNumber: log.blockNumber, blockHash: log.blockHash, transactionHash: log.transactionHash, logIndex: log.logIndex }]
        )
        const positions = positionsInTransaction(logs)
        const transfers: Array<Transfer> = []
        for (const [at, log] of logs.entries()) {
          transfers.push({
            transactionHash: log.transactionHash.toLowerCase(),
            // The log's place in its transaction, not the block's `logIndex`: it survives re-inclusion elsewhere.
            outputIndex: positions[at],
            blockHeight: log.blockNumber,
            blockHash: log.blockHash.toLowerCase(),
            token: log.address.toLowerCase(),
            key: log.args.to.toLowerCase(),
            toAddress: log.args.to,
            amountAtomic: log.args.value,
            fromAddress: log.args.from
          })
        }
        return { to: end, transfers }
      }
    })

  /** The configured tokens' Transfer logs of one transaction, from its receipt, positioned as `scan` positions them. */
  const transfersOf = (transactionHash: string) =>
    Effect.andThen(checkChain, Effect.tryPromise({ try: () => client.getTransactionReceipt({ hash: transactionHash as Hash }), catch: (error) => error }).pipe(
      Effect.map((receipt): ReadonlyArray<SeenTransfer> => {
        const tokens = new Set(tokenAddresses.map((address) => address.toLowerCase()))
        const logs = parseEventLogs({ abi: [TRANSFER], logs: receipt.logs, strict: true }).filter((log) => tokens.has(log.address.toLowerCase()))
        const positions = positionsInTransaction(logs)
        return logs.map((log, at) => ({
          transactionHash: log.transactionHash.toLowerCase(),
          outputIndex: positions[at],
          token: log.address.toLowerCase(),
          toAddress: log.args.to,
          amountAtomic: log.args.value,
          blockHash: receipt.blockHash.toLowerCase()
        }))
      }),
      Effect.catch((error) => error instanceof TransactionReceiptNotFoundError ? Effect.succeed(undefined) : Effect.fail(rpcError(network, "eth_getTransactionReceipt", error)))
    ))

  return {
    network,
    head: call("eth_getBlockByNumber(latest)", () => client.getBlock({ blockTag: "latest" })).pipe(Effect.flatMap((found) => blockHeaderOf(network, found))),
    block,
    scan,
    classify: (transfer, entries) => classifyTransfer(options, transfer, entries),
    transfersOf
  }
}
