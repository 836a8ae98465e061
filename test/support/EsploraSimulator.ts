import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { sha256 } from "@noble/hashes/sha2.js"
import { hex } from "@scure/base"
import { Address, NETWORK, OutScript, p2wpkh, TEST_NETWORK, Transaction } from "@scure/btc-signer"
import { CompactSizeLen, RawOldTx, RawTx } from "@scure/btc-signer/script.js"
import { pubECDSA, randomPrivateKeyBytes } from "@scure/btc-signer/utils.js"

/**
 * An Esplora-compatible REST server over a simulated bitcoin chain of real transactions: P2WPKH
 * payments built and signed with @scure/btc-signer from the simulator's own wallet, real block
 * headers and merkle roots, a mempool, and controls for mining, reorganisations, replacement (RBF),
 * eviction and an outage. It serves the Esplora endpoints the watcher calls, with the same JSON
 * shapes and pages of 25 transactions, and the raw blocks.
 */
export interface EsploraSimulator {
  readonly url: string
  readonly tipHeight: () => number
  /** Broadcasts a transaction paying `outputs` (to mainnet addresses) into the mempool; returns its txid. */
  readonly pay: (outputs: ReadonlyArray<{ readonly address: string; readonly sats: bigint }>) => string
  /** Mines `count` blocks; the first takes the whole mempool (or the listed txids only). */
  readonly mine: (count?: number, options?: { readonly only?: ReadonlyArray<string> }) => ReadonlyArray<string>
  /**
   * Replaces the last `depth` blocks by `depth + 1` new ones. Their transactions go back to the
   * mempool (`"mempool"`), into the first new block (`"include"`), or vanish (`"drop"`).
   */
  readonly reorg: (depth: number, transactions?: "mempool" | "include" | "drop") => void
  /** A replacement by fee (RBF) spending the same inputs; pays `outputs`, or the same outputs with a higher fee. */
  readonly replace: (txid: string, outputs?: ReadonlyArray<{ readonly address: string; readonly sats: bigint }>) => string
  /** Evicts a transaction from the mempool (as a node does after expiry or a conflict). */
  readonly drop: (txid: string) => void
  /** Every request answers 503 while down. */
  readonly setDown: (down: boolean) => void
  /** An API without `/block/:hash/raw` (the watcher then reads the JSON pages). */
  readonly setRawBlocks: (served: boolean) => void
  /** Adds `count` transactions paying unwatched addresses to the mempool (to fill blocks). */
  readonly fill: (count: number) => void
  /** Paths requested since the last call. */
  readonly takeRequests: () => ReadonlyArray<string>
  readonly close: () => Promise<void>
}

interface SimOutput {
  readonly script: Uint8Array
  readonly address: string | undefined
  readonly value: bigint
}

interface SimTx {
  readonly txid: string
  readonly raw: Uint8Array
  readonly inputs: ReadonlyArray<{ readonly txid: string; readonly index: number; readonly value: bigint }>
  readonly outputs: ReadonlyArray<SimOutput>
  readonly coinbase: boolean
}

interface SimBlock {
  readonly hash: string
  readonly height: number
  readonly time: number
  readonly previous: string
  readonly merkleRoot: string
  readonly txs: ReadonlyArray<SimTx>
  readonly raw: Uint8Array
}

const sha256d = (bytes: Uint8Array) => sha256(sha256(bytes))
const reversedHex = (bytes: Uint8Array) => hex.encode(Uint8Array.from(bytes).reverse())
const internal = (txid: string) => hex.decode(txid).reverse()
const mainnet = Address(NETWORK)
const FEE = 500n
const SUBSIDY = 5_000_000_000n

const addressOf = (script: Uint8Array, encoding = mainnet) => {
  try {
    const decoded = OutScript.decode(script)
    return ["pkh", "sh", "wpkh", "wsh", "tr"].includes(decoded.type) ? encoding.encode(decoded) : undefined
  } catch {
    return undefined
  }
}

const merkleRoot = (txids: ReadonlyArray<string>) => {
  let level = txids.map(internal)
  while (level.length > 1) {
    const next: Array<Uint8Array> = []
    for (let i = 0; i < level.length; i += 2) {
      const right = level[i + 1] ?? level[i]
      const pair = new Uint8Array(64)
      pair.set(level[i], 0)
      pair.set(right, 32)
      next.push(sha256d(pair))
    }
    level = next
  }
  return level[0]
}

const u32 = (value: number) => {
  const bytes = new Uint8Array(4)
  new DataView(bytes.buffer).setUint32(0, value >>> 0, true)
  return bytes
}

export const startEsploraSimulator = async (
  options: { readonly genesisTime?: number; readonly blockSeconds?: number; readonly signet?: boolean } = {}
): Promise<EsploraSimulator> => {
  // A signet API (`signet`): addresses in and out are `tb1…`, as a test invoice's.
  const net = options.signet === true ? TEST_NETWORK : NETWORK
  const encoding = Address(net)
  const key = randomPrivateKeyBytes()
  const wallet = p2wpkh(pubECDSA(key), net)
  const blockSeconds = options.blockSeconds ?? 600
  let clock = options.genesisTime ?? Math.floor(Date.now() / 1000)
  const chain: Array<SimBlock> = []
  const byHash = new Map<string, SimBlock>()
  const mempool = new Map<string, SimTx>()
  const known = new Map<string, SimTx>()
  /** Spendable outputs of the wallet: txid:index → value. */
  const utxos = new Map<string, { txid: string; index: number; value: bigint }>()
  let down = false
  let rawBlocks = true
  let requests: Array<string> = []

  const rememberOutputs = (tx: SimTx) => {
    tx.outputs.forEach((output, index) => {
      if (output.address === wallet.address) utxos.set(`${tx.txid}:${index}`, { txid: tx.txid, index, value: output.value })
    })
  }

  const coinbase = (height: number): SimTx => {
    const fields = {
      version: 2,
      segwitFlag: false,
      inputs: [{ txid: new Uint8Array(32), index: 0xffffffff, finalScriptSig: Uint8Array.of(4, ...u32(height), ...randomPrivateKeyBytes().subarray(0, 4)), sequence: 0xffffffff }],
      outputs: [{ amount: SUBSIDY, script: wallet.script }],
      witnesses: [],
      lockTime: 0
    }
    const raw = RawTx.encode(fields)
    const txid = reversedHex(sha256d(RawOldTx.encode({ version: 2, inputs: fields.inputs, outputs: fields.outputs, lockTime: 0 })))
    return { txid, raw, inputs: [], outputs: [{ script: wallet.script, address: wallet.address, value: SUBSIDY }], coinbase: true }
  }

  const sign = (inputs: ReadonlyArray<{ txid: string; index: number; value: bigint }>, outputs: ReadonlyArray<{ address: string; sats: bigint }>, fee: bigint): SimTx => {
    const tx = new Transaction()
    for (const input of inputs) {
      tx.addInput({ txid: input.txid, index: input.index, witnessUtxo: { script: wallet.script, amount: input.value }, sequence: 0xfffffffd })
    }
    const total = inputs.reduce((sum, input) => sum + input.value, 0n)
    const paid = outputs.reduce((sum, output) => sum + output.sats, 0n)
    if (total < paid + fee) throw new Error("the simulator's wallet cannot fund this payment")
    for (const output of outputs) tx.addOutputAddress(output.address, output.sats, net)
    if (total - paid - fee > 0n) tx.addOutputAddress(wallet.address!, total - paid - fee, net)
    tx.sign(key)
    tx.finalize()
    const parsed = Transaction.fromRaw(tx.extract())
    const simOutputs: Array<SimOutput> = []
    for (let index = 0; index < parsed.outputsLength; index++) {
      const output = parsed.getOutput(index)
      simOutputs.push({ script: output.script!, address: addressOf(output.script!, encoding), value: output.amount! })
    }
    return { txid: tx.id, raw: tx.extract(), inputs, outputs: simOutputs, coinbase: false }
  }

  const broadcast = (tx: SimTx) => {
    for (const input of tx.inputs) utxos.delete(`${input.txid}:${input.index}`)
    mempool.set(tx.txid, tx)
    known.set(tx.txid, tx)
    rememberOutputs(tx)
  }

  const fund = (amount: bigint) => {
    const chosen: Array<{ txid: string; index: number; value: bigint }> = []
    let total = 0n
    for (const utxo of utxos.values()) {
      chosen.push(utxo)
      total += utxo.value
      if (total >= amount + FEE) return chosen
    }
    throw new Error("the simulator's wallet has too little; mine a block first")
  }

  const makeBlock = (txs: ReadonlyArray<SimTx>): SimBlock => {
    const height = chain.length
    const previous = chain.at(-1)?.hash ?? "0".repeat(64)
    clock += blockSeconds
    const all = [coinbase(height), ...txs]
    const root = merkleRoot(all.map((tx) => tx.txid))
    const header = new Uint8Array(80)
    header.set(u32(0x20000000), 0)
    header.set(internal(previous), 4)
    header.set(root, 36)
    header.set(u32(clock), 68)
    header.set(u32(0x207fffff), 72)
    header.set(randomPrivateKeyBytes().subarray(0, 4), 76)
    const count = CompactSizeLen.encode(all.length)
    const size = all.reduce((sum, tx) => sum + tx.raw.length, 80 + count.length)
    const raw = new Uint8Array(size)
    raw.set(header, 0)
    raw.set(count, 80)
    let offset = 80 + count.length
    for (const tx of all) {
      raw.set(tx.raw, offset)
      offset += tx.raw.length
    }
    return { hash: reversedHex(sha256d(header)), height, time: clock, previous, merkleRoot: reversedHex(root), txs: all, raw }
  }

  const append = (txs: ReadonlyArray<SimTx>) => {
    const block = makeBlock(txs)
    chain.push(block)
    byHash.set(block.hash, block)
    for (const tx of block.txs) {
      mempool.delete(tx.txid)
      known.set(tx.txid, tx)
    }
    rememberOutputs(block.txs[0])
    return block.hash
  }

  const mine = (count = 1, mineOptions: { readonly only?: ReadonlyArray<string> } = {}) => {
    const hashes: Array<string> = []
    for (let i = 0; i < count; i++) {
      const txs = i > 0 ? [] : mineOptions.only === undefined ? [...mempool.values()] : mineOptions.only.map((txid) => mempool.get(txid)!).filter(Boolean)
      hashes.push(append(txs))
    }
    return hashes
  }

  const confirmedIn = (txid: string) => chain.find((block) => block.txs.some((tx) => tx.txid === txid))

  const txJson = (tx: SimTx) => {
    const block = confirmedIn(tx.txid)
    return {
      txid: tx.txid,
      version: 2,
      locktime: 0,
      vin: tx.coinbase
        ? [{ txid: "0".repeat(64), vout: 4294967295, prevout: null, scriptsig: "", witness: [], is_coinbase: true, sequence: 4294967295 }]
        : tx.inputs.map((input) => ({
          txid: input.txid,
          vout: input.index,
          prevout: { scriptpubkey: hex.encode(wallet.script), scriptpubkey_type: "v0_p2wpkh", scriptpubkey_address: wallet.address, value: Number(input.value) },
          scriptsig: "",
          witness: [],
          is_coinbase: false,
          sequence: 4294967293
        })),
      vout: tx.outputs.map((output) => ({
        scriptpubkey: hex.encode(output.script),
        scriptpubkey_type: output.address?.startsWith("bc1q") ? (output.address.length === 42 ? "v0_p2wpkh" : "v0_p2wsh") : "unknown",
        ...(output.address === undefined ? {} : { scriptpubkey_address: output.address }),
        value: Number(output.value)
      })),
      size: tx.raw.length,
      weight: tx.raw.length * 4,
      fee: tx.coinbase ? 0 : Number(tx.inputs.reduce((sum, input) => sum + input.value, 0n) - tx.outputs.reduce((sum, output) => sum + output.value, 0n)),
      status: block === undefined
        ? { confirmed: false }
        : { confirmed: true, block_height: block.height, block_hash: block.hash, block_time: block.time }
    }
  }

  const blockJson = (block: SimBlock) => ({
    id: block.hash,
    height: block.height,
    version: 0x20000000,
    timestamp: block.time,
    tx_count: block.txs.length,
    size: block.raw.length,
    weight: block.raw.length * 4,
    merkle_root: block.merkleRoot,
    previousblockhash: block.previous,
    mediantime: block.time,
    nonce: 0,
    bits: 0x207fffff,
    difficulty: 1
  })

  const paysTo = (tx: SimTx, address: string) => tx.outputs.some((output) => output.address === address)

  const route = (path: string): { status: number; type?: string; body: string | Uint8Array } => {
    const notFound = (what: string) => ({ status: 404, body: what })
    const json = (value: unknown) => ({ status: 200, type: "application/json", body: JSON.stringify(value) })
    const text = (value: string | number) => ({ status: 200, type: "text/plain", body: String(value) })
    let match: RegExpMatchArray | null
    if (path === "/blocks/tip/height") return text(chain.length - 1)
    if (path === "/blocks/tip/hash") return text(chain.at(-1)!.hash)
    if ((match = path.match(/^\/block-height\/(\d+)$/))) {
      const block = chain[Number(match[1])]
      return block === undefined ? notFound("Block not found") : text(block.hash)
    }
    if ((match = path.match(/^\/block\/([0-9a-f]{64})(\/.*)?$/))) {
      const block = byHash.get(match[1])
      if (block === undefined) return notFound("Block not found")
      const rest = match[2] ?? ""
      if (rest === "") return json(blockJson(block))
      if (rest === "/raw") return rawBlocks ? { status: 200, type: "application/octet-stream", body: block.raw } : notFound("Not Found")
      if (rest === "/txids") return json(block.txs.map((tx) => tx.txid))
      const page = rest.match(/^\/txs(?:\/(\d+))?$/)
      if (page !== null) {
        const start = Number(page[1] ?? 0)
        if (start % 25 !== 0) return { status: 400, body: "start index must be a multipication of 25" }
        if (start >= block.txs.length) return notFound("start index out of range")
        return json(block.txs.slice(start, start + 25).map(txJson))
      }
      return notFound("Not Found")
    }
    if ((match = path.match(/^\/tx\/([0-9a-f]{64})(\/status|\/hex)?$/))) {
      const tx = known.get(match[1])
      if (tx === undefined || (!mempool.has(tx.txid) && confirmedIn(tx.txid) === undefined)) return notFound("Transaction not found")
      if (match[2] === "/status") return json(txJson(tx).status)
      if (match[2] === "/hex") return text(hex.encode(tx.raw))
      return json(txJson(tx))
    }
    if ((match = path.match(/^\/address\/([a-z0-9]+)\/txs(\/mempool)?$/))) {
      const address = match[1]
      if (addressOf(OutScript.encode(encoding.decode(address)), encoding) === undefined) return { status: 400, body: "Invalid Bitcoin address" }
      const pending = [...mempool.values()].filter((tx) => paysTo(tx, address)).reverse().slice(0, 50)
      if (match[2] === "/mempool") return json(pending.map(txJson))
      const mined = chain.flatMap((block) => block.txs).filter((tx) => paysTo(tx, address)).reverse().slice(0, 25)
      return json([...pending, ...mined].map(txJson))
    }
    if (path === "/mempool/txids") return json([...mempool.keys()])
    return notFound("Not Found")
  }

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? "/").split("?")[0]
    requests.push(path)
    if (down) return response.writeHead(503, { "content-type": "text/plain" }).end("Service Unavailable")
    let answer: ReturnType<typeof route>
    try {
      answer = route(path)
    } catch (error) {
      answer = { status: 400, body: String(error) }
    }
    response.writeHead(answer.status, { "content-type": answer.type ?? "text/plain" }).end(answer.body)
  }

  const server = createServer(handle)
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port

  // A first block funds the wallet.
  append([])

  return {
    url: `http://127.0.0.1:${port}`,
    tipHeight: () => chain.length - 1,
    pay: (outputs) => {
      const total = outputs.reduce((sum, output) => sum + output.sats, 0n)
      const tx = sign(fund(total), outputs, FEE)
      broadcast(tx)
      return tx.txid
    },
    mine,
    reorg: (depth, transactions = "mempool") => {
      const removed = chain.splice(chain.length - depth, depth)
      const orphaned = removed.flatMap((block) => block.txs.filter((tx) => !tx.coinbase))
      for (const block of removed) {
        for (const [id, utxo] of utxos) if (utxo.txid === block.txs[0].txid) utxos.delete(id)
      }
      if (transactions === "drop") {
        for (const tx of orphaned) known.delete(tx.txid)
      } else {
        for (const tx of orphaned) mempool.set(tx.txid, tx)
      }
      append(transactions === "include" ? orphaned : [])
      for (let i = 0; i < depth; i++) append([])
    },
    replace: (txid, outputs) => {
      const original = mempool.get(txid)
      if (original === undefined) throw new Error(`${txid} is not in the mempool`)
      const paid = outputs ?? original.outputs
        .filter((output) => output.address !== wallet.address)
        .map((output) => ({ address: output.address!, sats: output.value }))
      mempool.delete(txid)
      known.delete(txid)
      for (const [id, utxo] of utxos) if (utxo.txid === txid) utxos.delete(id)
      const replacement = sign(original.inputs, paid, FEE * 3n)
      broadcast(replacement)
      return replacement.txid
    },
    drop: (txid) => {
      mempool.delete(txid)
      known.delete(txid)
      for (const [id, utxo] of utxos) if (utxo.txid === txid) utxos.delete(id)
    },
    setDown: (value) => {
      down = value
    },
    setRawBlocks: (served) => {
      rawBlocks = served
    },
    fill: (count) => {
      for (let i = 0; i < count; i++) {
        const address = p2wpkh(pubECDSA(randomPrivateKeyBytes()), net).address!
        const tx = sign(fund(1_000n), [{ address, sats: 1_000n }], FEE)
        broadcast(tx)
      }
    },
    takeRequests: () => {
      const taken = requests
      requests = []
      return taken
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
