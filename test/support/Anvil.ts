import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { gunzipSync } from "node:zlib"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { dirname, join } from "node:path"
import {
  type Abi,
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hash,
  type Hex,
  http,
  parseEventLogs,
  type PublicClient,
  type TestClient,
  type Transaction
} from "viem"

const artifact = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "contracts", "artifacts", `${name}.json`), "utf8")) as {
    abi: Abi
    deployedBytecode: Hex
  }
export const TestToken = artifact("TestToken")
export const TestTokenNoReturn = artifact("TestTokenNoReturn")

/** The anvil binary of the platform package that `@foundry-rs/anvil` depends on (its postinstall is not needed). */
const anvilBinary = () => {
  const require = createRequire(import.meta.url)
  try {
    return join(dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}/package.json`)), "bin", "anvil")
  } catch {
    throw new Error("anvil is not installed: run npm install (devDependency @foundry-rs/anvil)")
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

export interface Sent {
  readonly hash: Hash
  readonly blockNumber: bigint
  readonly blockHash: Hash
  readonly logIndex: number
}

export interface AnvilNode {
  readonly rpcUrl: string
  readonly port: number
  readonly chainId: number
  readonly publicClient: PublicClient
  readonly testClient: TestClient
  /** anvil's ten funded, unlocked accounts. */
  readonly accounts: ReadonlyArray<Address>
  /** Puts the test token's runtime code at `address`; it needs no constructor, so it works there at once. */
  readonly installToken: (address: Address, kind?: "standard" | "noReturn") => Promise<Address>
  readonly mint: (token: Address, to: Address, amount: bigint) => Promise<Hash>
  /** An ERC-20 transfer from an unlocked account, mined in a block of its own (automine). */
  readonly transfer: (token: Address, from: Address, to: Address, amount: bigint) => Promise<Sent>
  readonly mine: (blocks?: number) => Promise<void>
  /**
   * `anvil_reorg`: replaces the last `depth` blocks by as many new, empty ones (new hashes, same
   * height). Their transactions are gone (not back in the mempool), except `reinclude`: each is
   * sent again with the same fields and nonce, so it keeps its hash and lands in the new branch's
   * first block, when its nonce is still free there (otherwise it stays dropped).
   */
  readonly reorg: (depth: number, reinclude?: ReadonlyArray<Hash>) => Promise<void>
  readonly setNextBlockTimestamp: (unixSeconds: bigint) => Promise<void>
  /** Writes the chain (blocks included) to a file that `startAnvil({ loadState })` starts from. */
  readonly dumpState: () => Promise<string>
  readonly stop: () => Promise<void>
  /** SIGKILL: the node dies as a crashed process would. */
  readonly kill: () => Promise<void>
}

const missing = (hash: Hash): never => {
  throw new Error(`transaction ${hash} was not sent through this harness`)
}

const running = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL")
})

export interface AnvilOptions {
  readonly chainId?: number
  /** Reuse a port (to bring a killed node back where the service expects it). */
  readonly port?: number
  /** Genesis block timestamp (unix seconds), e.g. in the past so that later blocks can be timed there. */
  readonly genesisTimestamp?: bigint
  /** A file written by `dumpState`: the node comes back with that chain. */
  readonly loadState?: string
}

/** A real EVM node (anvil) on a loopback port, started in about 0.1 s. */
export const startAnvil = async (options: AnvilOptions = {}): Promise<AnvilNode> => {
  const chainId = options.chainId ?? 1
  const port = options.port ?? (await freePort())
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId), "--silent"]
  if (options.genesisTimestamp !== undefined) args.push("--timestamp", options.genesisTimestamp.toString())
  if (options.loadState !== undefined) args.push("--load-state", options.loadState)
  const child = spawn(anvilBinary(), args, { stdio: "ignore" })
  running.add(child)
  const exited = new Promise<void>((resolve) => child.once("exit", () => {
    running.delete(child)
    resolve()
  }))
  const rpcUrl = `http://127.0.0.1:${port}`
  const transport = http(rpcUrl, { retryCount: 0 })
  const publicClient = createPublicClient({ transport, pollingInterval: 50, cacheTime: 0 }) as PublicClient
  const testClient = createTestClient({ mode: "anvil", transport }) as TestClient
  const wallet = createWalletClient({ transport })

  for (let attempt = 0; ; attempt++) {
    try {
      await publicClient.getChainId()
      break
    } catch (error) {
      if (attempt > 200 || child.exitCode !== null) throw new Error(`anvil did not start on port ${port}: ${String(error)}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  const accounts = await wallet.getAddresses()
  const chain = { id: chainId, name: "anvil", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } }

  // Sent transactions, so that a reorg can mine one again after an earlier reorg dropped it.
  const sentTransactions = new Map<Hash, Transaction>()
  const send = async (token: Address, from: Address, functionName: "mint" | "transfer", args: readonly [Address, bigint]) => {
    const hash = await wallet.writeContract({ account: from, chain, address: token, abi: TestToken.abi, functionName, args })
    sentTransactions.set(hash, await publicClient.getTransaction({ hash }))
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    if (receipt.status !== "success") throw new Error(`${functionName} reverted`)
    return receipt
  }

  return {
    rpcUrl,
    port,
    chainId,
    publicClient,
    testClient,
    accounts,
    installToken: async (address, kind = "standard") => {
      await testClient.setCode({ address, bytecode: (kind === "standard" ? TestToken : TestTokenNoReturn).deployedBytecode })
      return address
    },
    mint: async (token, to, amount) => (await send(token, accounts[0], "mint", [to, amount])).transactionHash,
    transfer: async (token, from, to, amount) => {
      const receipt = await send(token, from, "transfer", [to, amount])
      const [log] = parseEventLogs({ abi: TestToken.abi, logs: receipt.logs, eventName: "Transfer" })
      return { hash: receipt.transactionHash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, logIndex: log.logIndex }
    },
    mine: (blocks = 1) => testClient.mine({ blocks }),
    reorg: async (depth, reinclude = []) => {
      const fork = (await publicClient.getBlockNumber()) - BigInt(depth)
      const candidates = reinclude.map((hash) => sentTransactions.get(hash) ?? missing(hash))
      // Only a transaction whose nonce is still free at the fork point can be mined again there.
      const eligible = []
      for (const sent of candidates) {
        if ((await publicClient.getTransactionCount({ address: sent.from, blockNumber: fork })) === sent.nonce) eligible.push(sent)
      }
      const transactions = eligible.map((sent) => {
        return [{
          from: sent.from,
          to: sent.to,
          input: sent.input,
          value: `0x${sent.value.toString(16)}`,
          nonce: `0x${sent.nonce.toString(16)}`,
          gas: `0x${sent.gas.toString(16)}`,
          ...(sent.maxFeePerGas === undefined ? {} : {
            maxFeePerGas: `0x${sent.maxFeePerGas.toString(16)}`,
            maxPriorityFeePerGas: `0x${(sent.maxPriorityFeePerGas ?? 0n).toString(16)}`
          })
        }, 0] as const
      })
      await publicClient.request({ method: "anvil_reorg" as never, params: [depth, transactions] as never })
    },
    setNextBlockTimestamp: (unixSeconds) => testClient.setNextBlockTimestamp({ timestamp: unixSeconds }),
    dumpState: async () => {
      const file = join(mkdtempSync(join(tmpdir(), "anvil-state-")), "state.json")
      // anvil answers the gzipped JSON state as hex; --load-state reads the JSON itself.
      const dump = (await testClient.request({ method: "anvil_dumpState" as never })) as string
      writeFileSync(file, gunzipSync(Buffer.from(dump.slice(2), "hex")))
      return file
    },
    stop: async () => {
      child.kill("SIGTERM")
      await exited
    },
    kill: async () => {
      child.kill("SIGKILL")
      await exited
    }
  }
}
