import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { sha256 } from "@noble/hashes/sha2.js"
import { hex } from "@scure/base"
import { BTCArray, CompactSizeLen, RawOldTx, RawTx } from "@scure/btc-signer/script.js"
import type { JsonBody } from "./Json.ts"

/**
 * An HTTP front on loopback that forwards to a real node (anvil's or the litesvm Solana node's
 * JSON-RPC, or the Esplora simulator's REST API) and misbehaves on demand, the way providers do:
 * `mode` "error" answers 503, "rateLimited" answers 429 with `Retry-After: retryAfterSeconds`,
 * "hang" accepts requests and never answers; `lag` reports a head (Solana: `getSlot`) that many
 * blocks behind the node's; `lieFrom(height)`
 * gives other hashes for the blocks at that height and above (a fork, or a node that lies). A
 * path prefix `/key/<key>` (a provider's API key) is dropped. `requests` logs what reached it (JSON-RPC
 * method names, or REST paths), misbehaving or not. It also lies about payments on demand, honest
 * otherwise: `inventLogs` are added to its `eth_getLogs` answers whose range covers their block,
 * and their transaction's receipt is forged to show them;
 * `inventTxs` add a transaction to a block's JSON pages (its raw block is then refused, so readers
 * fall back to the pages); `inventSignatures` list a made-up signature beside a real one of an
 * account and answer its `getTransaction` with the real transaction's, one key swapped.
 * `hideAddresses` (EVM, lower-case) make it the reverse liar: it drops the Transfer logs to those
 * addresses from `eth_getLogs` and answers a receipt holding one with null; `denyTxids` (Esplora)
 * answer 404 for those transactions (`/tx/:txid`, its status); `omitTxids` (Esplora) leave those
 * transactions out of its raw blocks (`/block/:hash/raw`), the header unchanged, and out of its
 * blocks' JSON pages (`/block/:hash/txs/:start`); `rawBlocks` false (Esplora) answers 404 for every
 * raw block, as an API that serves none (readers then use the JSON pages); `hideSignatures` (Solana) make it
 * the reverse liar there: it leaves those out of `getSignaturesForAddress` and answers their
 * `getTransaction` with null.
 */
export interface RpcFront {
  readonly url: string
  readonly requests: Array<string>
  mode: "pass" | "error" | "rateLimited" | "hang"
  /** Solana: a node without the history, that knows no transaction (statuses null, getTransaction null). */
  forgetful: boolean
  retryAfterSeconds: number
  lag: number
  readonly inventLogs: Array<Json>
  readonly hideAddresses: Array<string>
  readonly denyTxids: Array<string>
  readonly omitTxids: Array<string>
  rawBlocks: boolean
  readonly hideSignatures: Array<string>
  readonly inventTxs: Array<{ readonly blockHash: string; readonly tx: Json }>
  readonly inventSignatures: Array<{ readonly account: string; readonly real: string; readonly fake: string; readonly from: string; readonly to: string }>
  readonly lieFrom: (height: number) => void
  readonly truth: () => void
  readonly close: () => Promise<void>
}

type Json = JsonBody

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => resolve(Buffer.concat(chunks).toString("utf8"))).on("error", reject)
  })

/** The receipt a consistent liar shows for a Transfer log it invented. */
const forgedReceipt = (log: Json) => ({
  transactionHash: log.transactionHash,
  transactionIndex: log.transactionIndex,
  blockHash: log.blockHash,
  blockNumber: log.blockNumber,
  from: `0x${log.topics[1].slice(26)}`,
  to: log.address,
  status: "0x1",
  type: "0x2",
  gasUsed: "0x1",
  cumulativeGasUsed: "0x1",
  effectiveGasPrice: "0x1",
  contractAddress: null,
  logsBloom: `0x${"0".repeat(512)}`,
  logs: [log]
})

const Transactions = BTCArray(RawTx)

/** A raw block without the listed transactions (by txid), its 80-byte header kept. */
export const withoutTransactions = (block: Uint8Array, txids: ReadonlyArray<string>) => {
  const txidOf = (tx: ReturnType<typeof RawTx.decode>) =>
    hex.encode(sha256(sha256(RawOldTx.encode({ version: tx.version, inputs: tx.inputs, outputs: tx.outputs, lockTime: tx.lockTime }))).reverse())
  const kept = Transactions.decode(block.subarray(80)).filter((tx) => !txids.includes(txidOf(tx)))
  const count = CompactSizeLen.encode(kept.length)
  return Buffer.concat([block.subarray(0, 80), count, ...kept.map((tx) => RawTx.encode(tx))])
}

export const startRpcFront = async (target: string, kind: "jsonrpc" | "esplora"): Promise<RpcFront> => {
  let lyingFrom = Number.POSITIVE_INFINITY
  const lieAt = (height: number) => (height >= lyingFrom ? kind === "jsonrpc" ? `0x${height.toString(16).padStart(64, "f")}` : height.toString(16).padStart(64, "f") : undefined)
  const held = new Set<ServerResponse>()
  const sockets = new Set<Socket>()

  const rpc = async (body: Json): Promise<Json> => {
    const response = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    return response.json()
  }

  const jsonRpc = async (body: Json): Promise<Json> => {
    const calls: Array<Json> = Array.isArray(body) ? body : [body]
    let head: number | undefined
    if (front.lag > 0 && calls.some((call) => call.method === "eth_getBlockByNumber" && call.params?.[0] === "latest" || call.method === "eth_blockNumber")) {
      head = Number(BigInt((await rpc({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] })).result)) - front.lag
    }
    const inventedTransaction = (call: Json) => call.method === "getTransaction" ? front.inventSignatures.find((entry) => entry.fake === call.params?.[0]) : undefined
    const forwarded = calls.map((call) => {
      const invented = inventedTransaction(call)
      if (invented !== undefined) return { ...call, params: [invented.real, ...call.params.slice(1)] }
      return head !== undefined && call.method === "eth_getBlockByNumber" && call.params?.[0] === "latest"
        ? { ...call, params: [`0x${head.toString(16)}`, ...call.params.slice(1)] }
        : call
    })
    const answers: Array<Json> = [].concat(await rpc(forwarded))
    const hides = (log: Json) => front.hideAddresses.some((address) => `${log.topics?.[2] ?? ""}`.toLowerCase().endsWith(address.slice(2)))
    const fixed = answers.map((original) => {
      let answer = original
      const call = calls.find((candidate) => candidate.id === answer.id)
      const invented = inventedTransaction(call ?? {})
      if (invented !== undefined && answer.result != null) {
        return JSON.parse(JSON.stringify(answer).replaceAll(invented.real, invented.fake).replaceAll(invented.from, invented.to))
      }
      if (call?.method === "getSignaturesForAddress" && Array.isArray(answer.result)) {
        const extra = front.inventSignatures.filter((entry) => entry.account === "*" || entry.account === call.params?.[0])
          .flatMap((entry) => answer.result.filter((info: Json) => info.signature === entry.real).map((info: Json) => ({ ...info, signature: entry.fake })))
        if (extra.length > 0) return { ...answer, result: [...extra, ...answer.result] }
      }
      if (call?.method === "getSignaturesForAddress" && Array.isArray(answer.result) && front.hideSignatures.length > 0) {
        return { ...answer, result: answer.result.filter((info: Json) => !front.hideSignatures.includes(info.signature)) }
      }
      if (call?.method === "getTransaction" && front.hideSignatures.includes(call.params?.[0])) return { ...answer, result: null }
      if (call?.method === "eth_getLogs" && Array.isArray(answer.result) && front.hideAddresses.length > 0) {
        answer = { ...answer, result: answer.result.filter((log: Json) => !hides(log)) }
      }
      if (call?.method === "eth_getTransactionReceipt" && answer.result?.logs?.some(hides) === true) return { ...answer, result: null }
      const inventedLog = call?.method === "eth_getTransactionReceipt" ? front.inventLogs.find((log) => log.transactionHash === call.params?.[0]) : undefined
      if (inventedLog !== undefined) return { ...answer, result: forgedReceipt(inventedLog) }
      if (call?.method === "eth_getLogs" && Array.isArray(answer.result)) {
        const from = BigInt(call.params[0].fromBlock)
        const to = BigInt(call.params[0].toBlock)
        const extra = front.inventLogs.filter((log) => BigInt(log.blockNumber) >= from && BigInt(log.blockNumber) <= to)
        if (extra.length > 0) return { ...answer, result: [...answer.result, ...extra] }
      }
      if (call?.method === "eth_blockNumber" && head !== undefined) return { ...answer, result: `0x${head.toString(16)}` }
      if (front.forgetful && call?.method === "getTransaction") return { ...answer, result: null }
      if (front.forgetful && call?.method === "getSignatureStatuses" && answer.result?.value !== undefined) {
        return { ...answer, result: { ...answer.result, value: answer.result.value.map(() => null) } }
      }
      // Solana's head is its slot.
      if (call?.method === "getSlot" && front.lag > 0 && typeof answer.result === "number") return { ...answer, result: answer.result - front.lag }
      if (call?.method === "eth_getBlockByNumber" && answer.result?.number != null) {
        const lie = lieAt(Number(BigInt(answer.result.number)))
        if (lie !== undefined) return { ...answer, result: { ...answer.result, hash: lie } }
      }
      return answer
    })
    return Array.isArray(body) ? fixed : fixed[0]
  }

  const esplora = async (path: string): Promise<{ status: number; body: Buffer }> => {
    const get = async (at: string) => {
      const response = await fetch(`${target}${at}`)
      return { status: response.status, body: Buffer.from(await response.arrayBuffer()) }
    }
    if (front.lag > 0 && (path === "/blocks/tip/hash" || path === "/blocks/tip/height")) {
      const height = Number((await get("/blocks/tip/height")).body.toString()) - front.lag
      return path === "/blocks/tip/height" ? { status: 200, body: Buffer.from(String(height)) } : get(`/block-height/${height}`)
    }
    const block = /^\/block\/([0-9a-f]{64})(\/.*)?$/.exec(path)
    const invented = block === null ? [] : front.inventTxs.filter((entry) => entry.blockHash === block[1])
    if (invented.length > 0 && block !== null) {
      if (block[2] === "/raw") return { status: 404, body: Buffer.from("Not Found") }
      const answer = await get(path)
      const json = JSON.parse(answer.body.toString())
      if (block[2] === undefined) return { status: 200, body: Buffer.from(JSON.stringify({ ...json, tx_count: json.tx_count + invented.length })) }
      if (block[2] === "/txs" || block[2] === "/txs/0") return { status: 200, body: Buffer.from(JSON.stringify([...json, ...invented.map((entry) => entry.tx)])) }
      return answer
    }
    if (block?.[2] === "/raw" && !front.rawBlocks) return { status: 404, body: Buffer.from("Not Found") }
    if (block?.[2]?.startsWith("/txs") === true && front.omitTxids.length > 0) {
      const answer = await get(path)
      if (answer.status !== 200) return answer
      const kept = (JSON.parse(answer.body.toString()) as Array<Json>).filter((tx) => !front.omitTxids.includes(tx.txid))
      return { status: 200, body: Buffer.from(JSON.stringify(kept)) }
    }
    if (block?.[2] === "/raw" && front.omitTxids.length > 0) {
      const answer = await get(path)
      return answer.status === 200 ? { status: 200, body: withoutTransactions(answer.body, front.omitTxids) } : answer
    }
    const denied = /^\/tx\/([0-9a-f]{64})/.exec(path)
    if (denied !== null && front.denyTxids.includes(denied[1])) return { status: 404, body: Buffer.from("Transaction not found") }
    const atHeight = /^\/block-height\/(\d+)$/.exec(path)
    const lie = atHeight === null ? undefined : lieAt(Number(atHeight[1]))
    if (lie !== undefined) return { status: 200, body: Buffer.from(lie) }
    return get(path)
  }

  const server = createServer(async (request, response) => {
    const body = await readBody(request)
    // A provider's key in the path (`/key/<key>/...`) is accepted and dropped.
    const path = (request.url ?? "/").replace(/^\/key\/[^/]+/, "")
    let parsed: Json
    if (kind === "jsonrpc") {
      try {
        parsed = JSON.parse(body)
      } catch {
        parsed = {}
      }
      for (const call of [].concat(parsed)) front.requests.push((call as Json).method)
    } else {
      front.requests.push(path)
    }
    switch (front.mode) {
      case "hang":
        held.add(response)
        return
      case "error":
        response.writeHead(503, { "content-type": "text/plain" }).end("unavailable")
        return
      case "rateLimited":
        response.writeHead(429, { "content-type": "text/plain", "retry-after": String(front.retryAfterSeconds) }).end("too many requests")
        return
    }
    try {
      if (kind === "jsonrpc") {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(await jsonRpc(parsed)))
      } else {
        const answer = await esplora(path)
        response.writeHead(answer.status).end(answer.body)
      }
    } catch (error) {
      response.writeHead(502).end(String(error))
    }
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)))
  const front: RpcFront = {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    mode: "pass",
    forgetful: false,
    retryAfterSeconds: 1,
    lag: 0,
    inventLogs: [],
    hideAddresses: [],
    denyTxids: [],
    omitTxids: [],
    rawBlocks: true,
    hideSignatures: [],
    inventTxs: [],
    inventSignatures: [],
    lieFrom: (height) => {
      lyingFrom = height
    },
    truth: () => {
      lyingFrom = Number.POSITIVE_INFINITY
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of held) response.destroy()
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  return front
}
