import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Socket } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { gunzipSync } from "node:zlib"
import {
  type Address,
  createClient,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  type Hash,
  type Hex,
  http,
  parseAbi,
  parseEventLogs,
  type PublicClient,
  rpcSchema,
  type TestClient
} from "viem"

const deployedBytecode = (name: string) =>
  (JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "contracts", "artifacts", `${name}.json`), "utf8")) as { deployedBytecode: Hex })
    .deployedBytecode
const TOKEN_CODE = { standard: deployedBytecode("TestToken"), noReturn: deployedBytecode("TestTokenNoReturn") }

// Enough to send to either token: return values are never decoded.
const TOKEN_ABI = parseAbi([
  "function mint(address to, uint256 amount)",
  "function transfer(address to, uint256 amount)",
  "event Transfer(address indexed from, address indexed to, uint256 value)"
])

/**
 * The anvil binary of `@foundry-rs/anvil-<platform>-<arch>`, a devDependency on its own: the
 * `@foundry-rs/anvil` wrapper would need every platform's package in the lock file (which `npm ci`
 * insists on) and a postinstall that npm does not run here. Only linux-amd64 is pinned.
 */
/** Where the EVM suites install the test token as the configured USDC and USDT contracts. */
export const TEST_TOKENS: { readonly USDC: Address; readonly USDT: Address } = {
  USDC: getAddress("0x00000000000000000000000000000000000a11ce"),
  USDT: getAddress("0x00000000000000000000000000000000000b0b00")
}

export const anvilBinary = (): string => {
  const name = `@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`
  let directory: string
  try {
    directory = dirname(createRequire(import.meta.url).resolve(`${name}/package.json`))
  } catch {
    throw new Error(`anvil is not installed: ${name} is missing (the project pins @foundry-rs/anvil-linux-amd64; run npm ci)`)
  }
  const binary = join(directory, "bin", process.platform === "win32" ? "anvil.exe" : "anvil")
  if (!existsSync(binary)) throw new Error(`anvil is not installed: ${binary} is missing (run npm ci)`)
  return binary
}

export interface SentTransfer {
  readonly hash: Hash
  readonly blockNumber: bigint
  readonly blockHash: Hash
  readonly logIndex: number
}

export interface AnvilNode {
  /** http://127.0.0.1:<port> */
  readonly rpcUrl: string
  readonly port: number
  readonly chainId: number
  readonly publicClient: PublicClient
  readonly testClient: TestClient
  /** anvil's ten default accounts: unlocked, 10,000 ETH each. */
  readonly accounts: ReadonlyArray<Address>
  /**
   * Puts TestToken (or TestTokenNoReturn) runtime code at `address` (anvil_setCode) and returns the
   * address checksummed; it needs no constructor, so it works there at once. Addresses given to
   * the harness may be in any letter case.
   */
  readonly installToken: (address: Address, kind?: "standard" | "noReturn") => Promise<Address>
  /** Mints from accounts[0] (anyone may mint); resolves once mined. */
  readonly mint: (token: Address, to: Address, amount: bigint) => Promise<Hash>
  /** An ERC-20 transfer signed by anvil for `from` (one of `accounts`); resolves once mined, with its Transfer log's position. */
  readonly transfer: (token: Address, from: Address, to: Address, amount: bigint) => Promise<SentTransfer>
  readonly mine: (blocks?: number) => Promise<void>
  /**
   * anvil_reorg, as verified against anvil 1.7.1: the last `depth` blocks (1 ≤ depth ≤ head height)
   * are replaced by `depth` new blocks at the same heights with new hashes; the head height is
   * unchanged. Their transactions are gone: no receipt, not found by hash, not in the mempool,
   * nonces and balances back to the fork block's.
   *
   * `reinclude` mines transactions sent earlier through this harness (mint/transfer, even ones an
   * earlier reorg dropped) again, byte for byte, so each keeps its hash: in the new branch's first
   * block, or in the block `blockOffset` after it (0 ≤ blockOffset < depth). A transaction that is
   * invalid there (its nonce is not the sender's next one, e.g. it is still on the chain below the
   * fork) is left out silently by anvil. All other new blocks are empty.
   *
   * The new blocks get the fork block's timestamp: anvil rewinds its clock to it (later blocks go
   * on from there with the wall clock) and forgets a pending setNextBlockTimestamp.
   */
  readonly reorg: (depth: number, reinclude?: ReadonlyArray<Hash | { readonly hash: Hash; readonly blockOffset: number }>) => Promise<void>
  /**
   * The next block's timestamp; it must not be lower than the latest block's (equal is allowed).
   * Without it, blocks carry the wall clock's second (several blocks may share one), counted from
   * the genesis timestamp: `genesisTimestamp` shifts the whole clock.
   */
  readonly setNextBlockTimestamp: (unixSeconds: bigint) => Promise<void>
  /** Writes the chain (blocks included) to a file that `startAnvil({ loadState })` starts from. */
  readonly dumpState: () => Promise<string>
  /** SIGTERM; resolves when the process has exited. */
  readonly stop: () => Promise<void>
  /** SIGKILL, as a crashed node; resolves when the process has exited (and its port is free). */
  readonly kill: () => Promise<void>
}

export interface AnvilOptions {
  /** Default 1. */
  readonly chainId?: number
  /** Default: a free port chosen by the OS. Pass a killed node's port to bring it back there. */
  readonly port?: number
  /** Interval mining every `blockTime` seconds instead of one block per transaction (automine). */
  readonly blockTime?: number
  /** With `blockTime`: a block per transaction as well (anvil --mixed-mining), as `npm run demo:chain` runs it. */
  readonly mixedMining?: boolean
  /** Genesis timestamp (unix seconds), e.g. in the past so that later blocks can be timed there. */
  readonly genesisTimestamp?: bigint
  /** A file written by `dumpState`: the node comes back with that chain. */
  readonly loadState?: string
  /**
   * A file the chain (blocks included) is kept in: read at start when it exists, written every
   * few seconds and on SIGTERM (anvil --state), so a node started on it again goes on from there.
   */
  readonly persistTo?: string
}

type AnvilRpc = [
  { Method: "anvil_reorg"; Parameters: [number, Array<[Hex, number]>]; ReturnType: null },
  { Method: "eth_getRawTransactionByHash"; Parameters: [Hash]; ReturnType: Hex | null }
]

const running = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL")
})

/**
 * Spawns anvil and resolves with the port it listens on. Not --silent: its "Listening on" line says
 * when it is ready and which port the OS picked for --port 0 (no race for a free port).
 */
const spawnAnvil = (args: ReadonlyArray<string>) =>
  new Promise<{ child: ChildProcess; port: number; exited: Promise<void> }>((resolve, reject) => {
    const child = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] })
    const stdout = child.stdout as Socket
    const stderr = child.stderr as Socket
    running.add(child)
    const exited = new Promise<void>((done) =>
      child.once("exit", () => {
        running.delete(child)
        done()
      })
    )
    let output = ""
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
      const listening = /Listening on 127\.0\.0\.1:(\d+)/.exec(output)
      if (listening === null) return
      for (const stream of [stdout, stderr]) {
        stream.off("data", collect)
        stream.resume() // keep draining: anvil prints a line per transaction and block
        stream.unref()
      }
      // A running node does not keep this process alive; the exit handler above kills it.
      child.unref()
      resolve({ child, port: Number(listening[1]), exited })
    }
    stdout.on("data", collect)
    stderr.on("data", collect)
    child.once("error", reject)
    void exited.then(() => reject(new Error(`anvil exited at start: ${output.trim()}`)))
  })

/** A real EVM node (anvil) on a loopback port, started in about 0.2 s. */
export const startAnvil = async (options: AnvilOptions = {}): Promise<AnvilNode> => {
  const chainId = options.chainId ?? 1
  const args = ["--host", "127.0.0.1", "--port", String(options.port ?? 0), "--chain-id", String(chainId)]
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime))
  if (options.mixedMining === true) args.push("--mixed-mining")
  if (options.genesisTimestamp !== undefined) args.push("--timestamp", options.genesisTimestamp.toString())
  if (options.loadState !== undefined) args.push("--load-state", options.loadState)
  if (options.persistTo !== undefined) args.push("--state", options.persistTo, "--state-interval", "5")

  // A port given back right after its node was killed may still be held for a moment.
  let started: Awaited<ReturnType<typeof spawnAnvil>> | undefined
  for (let attempt = 0; started === undefined; attempt++) {
    try {
      started = await spawnAnvil(args)
    } catch (error) {
      if (options.port === undefined || attempt >= 40 || !/address already in use/i.test(String(error))) throw error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  const { child, port, exited } = started

  const rpcUrl = `http://127.0.0.1:${port}`
  const transport = http(rpcUrl, { retryCount: 0 })
  const publicClient: PublicClient = createPublicClient({ transport, pollingInterval: 20, cacheTime: 0 })
  const testClient: TestClient = createTestClient({ mode: "anvil", transport })
  const wallet = createWalletClient({ transport })
  const rpc = createClient({ transport, rpcSchema: rpcSchema<AnvilRpc>() })
  if ((await publicClient.getChainId()) !== chainId) throw new Error(`anvil on port ${port} answers another chain id`)
  const accounts = await wallet.getAddresses()

  // Every transaction's signed bytes, so that a reorg can mine it again after it was dropped.
  const signed = new Map<Hash, Hex>()
  const send = async (from: Address, to: Address, data: Hex) => {
    const hash = await wallet.sendTransaction({ account: getAddress(from), chain: null, to: getAddress(to), data })
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 10 })
    if (receipt.status !== "success") throw new Error(`transaction ${hash} to ${to} reverted`)
    const raw = await rpc.request({ method: "eth_getRawTransactionByHash", params: [hash] })
    if (raw !== null) signed.set(hash, raw)
    return receipt
  }
  const signedBytes = (hash: Hash) => {
    const raw = signed.get(hash)
    if (raw === undefined) throw new Error(`transaction ${hash} was not sent through this harness`)
    return raw
  }
  const halt = async (signal: NodeJS.Signals) => {
    child.ref() // wait for the exit even if nothing else keeps this process alive
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    await exited
  }

  return {
    rpcUrl,
    port,
    chainId,
    publicClient,
    testClient,
    accounts,
    installToken: async (address, kind = "standard") => {
      await testClient.setCode({ address: getAddress(address), bytecode: TOKEN_CODE[kind] })
      return getAddress(address)
    },
    mint: async (token, to, amount) =>
      (await send(accounts[0], token, encodeFunctionData({ abi: TOKEN_ABI, functionName: "mint", args: [getAddress(to), amount] }))).transactionHash,
    transfer: async (token, from, to, amount) => {
      const receipt = await send(from, token, encodeFunctionData({ abi: TOKEN_ABI, functionName: "transfer", args: [getAddress(to), amount] }))
      const log = parseEventLogs({ abi: TOKEN_ABI, logs: receipt.logs, eventName: "Transfer" })
        .find((log) => log.address.toLowerCase() === token.toLowerCase())
      if (log === undefined) throw new Error(`transfer ${receipt.transactionHash} emitted no Transfer log`)
      return { hash: receipt.transactionHash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, logIndex: log.logIndex }
    },
    mine: (blocks = 1) => testClient.mine({ blocks }),
    reorg: async (depth, reinclude = []) => {
      const pairs = reinclude.map((entry): [Hex, number] => typeof entry === "string" ? [signedBytes(entry), 0] : [signedBytes(entry.hash), entry.blockOffset])
      await rpc.request({ method: "anvil_reorg", params: [depth, pairs] })
    },
    setNextBlockTimestamp: (unixSeconds) => testClient.setNextBlockTimestamp({ timestamp: unixSeconds }),
    dumpState: async () => {
      const file = join(mkdtempSync(join(tmpdir(), "anvil-state-")), "state.json")
      // anvil answers the gzipped JSON state as hex; --load-state reads the JSON.
      const dump = await testClient.dumpState()
      writeFileSync(file, gunzipSync(Buffer.from(dump.slice(2), "hex")))
      return file
    },
    stop: () => halt("SIGTERM"),
    kill: () => halt("SIGKILL")
  }
}
