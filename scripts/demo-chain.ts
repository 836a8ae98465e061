/**
 * The service watching real local chains, in one command (development only):
 *
 *   npm run demo:chain                                      anvil for ethereum (chain id 1) and base
 *                                                           (8453) with the test tokens, and the service
 *                                                           with the demo merchant, watching both
 *   npm run demo:chain -- pay <invoiceId> [optionId] [amount]   a real token transfer to that option
 *
 * The first command records where everything listens in a state file (DEMO_CHAIN_STATE, default
 * ./data/demo-chain.json) that `pay` reads, and removes it when it stops (Ctrl-C or SIGTERM).
 *
 * The embedded database and both chains live in one data directory (DEMO_CHAIN_DATA_DIR, default
 * ./data/demo-chain; `memory://` keeps nothing), so keys, webhook settings, invoices and the chains'
 * blocks survive a restart together: the service stops before the chains, which write themselves
 * out last, so the database never knows a block its chain lost. The anvil ports are fixed
 * (DEMO_CHAIN_ETHEREUM_PORT, default 8545; DEMO_CHAIN_BASE_PORT, default 8546; 0 picks a free one)
 * so that a wallet pointed at them keeps working, and printed at start.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { dirname, join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { type Address, createPublicClient, createWalletClient, encodeFunctionData, getAddress, http, parseAbi, parseUnits } from "viem"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../test/support/Anvil.ts"

const NETWORKS = { ethereum: 1, base: 8453 } as const
type DemoNetwork = keyof typeof NETWORKS
const DEFAULT_PORTS: Record<DemoNetwork, number> = { ethereum: 8545, base: 8546 }
const CONFIRMATIONS = 2
const PAYER_FUNDS = 1_000_000n * 10n ** 6n
const TRANSFER_ABI = parseAbi(["function transfer(address to, uint256 amount)"])

interface DemoState {
  readonly pid: number
  readonly serviceUrl: string
  readonly payer: Address
  readonly chains: Record<DemoNetwork, { readonly rpcUrl: string; readonly chainId: number }>
}

const statePath = () => resolve(process.env.DEMO_CHAIN_STATE ?? join("data", "demo-chain.json"))

/** Where the database and the chains are kept between runs; undefined: nowhere (memory://). */
const dataDir = (): string | undefined => {
  const wanted = process.env.DEMO_CHAIN_DATA_DIR ?? join("data", "demo-chain")
  return wanted === "memory://" ? undefined : resolve(wanted)
}
const chainFile = (directory: string, network: DemoNetwork) => join(directory, `${network}.json`)
const databaseDir = (directory: string) => join(directory, "db")

const fail = (message: string): never => {
  console.error(message)
  process.exit(1)
}

// ---- npm run demo:chain ----------------------------------------------------------------------

/** PORT as npm start reads it (default 3000); PORT=0 becomes a free port now, so that the printed URLs are real. */
const listenPort = async (): Promise<number> => {
  const wanted = Number(process.env.PORT ?? 3000)
  if (wanted !== 0) return wanted
  return new Promise((done, reject) => {
    const probe = createServer().once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => done(port))
    })
  })
}

const chainPort = (network: DemoNetwork): number => {
  const variable = `DEMO_CHAIN_${network.toUpperCase()}_PORT`
  const port = Number(process.env[variable] ?? DEFAULT_PORTS[network])
  return Number.isInteger(port) && port >= 0 && port < 65536 ? port : fail(`${variable} must be a port number (0 picks a free one)`)
}

/**
 * One anvil per network at the service's chain id: a block per transaction and one a second, kept
 * in the data directory. A new chain gets the test tokens at TEST_TOKENS and a funded payer; a kept
 * one has them already.
 */
const startChain = async (network: DemoNetwork, directory: string | undefined): Promise<AnvilNode> => {
  const port = chainPort(network)
  const persistTo = directory === undefined ? undefined : chainFile(directory, network)
  const node = await startAnvil({ chainId: NETWORKS[network], blockTime: 1, mixedMining: true, port, ...(persistTo === undefined ? {} : { persistTo }) }).catch((error: Error) =>
    fail(`cannot start anvil for ${network} on port ${port} (${error.message.split("\n")[0]}): set DEMO_CHAIN_${network.toUpperCase()}_PORT to a free port, or 0`)
  )
  if ((await node.publicClient.getCode({ address: TEST_TOKENS.USDC })) !== undefined) return node
  for (const token of Object.values(TEST_TOKENS)) {
    await node.installToken(token)
    await node.mint(token, node.accounts[1], PAYER_FUNDS)
  }
  return node
}

/** A kept database without its chains would be ahead of fresh ones: refuse rather than confuse the watchers. */
const checkDataDir = (directory: string | undefined) => {
  if (directory === undefined || !existsSync(databaseDir(directory))) return
  const lost = (Object.keys(NETWORKS) as Array<DemoNetwork>).filter((network) => !existsSync(chainFile(directory, network)))
  if (lost.length > 0) fail(`${databaseDir(directory)} is kept but ${lost.map((network) => chainFile(directory, network)).join(" and ")} is not: delete ${directory} to start over`)
}

/** The service's settings for watching the local chains (docs/configuration.md). */
const chainEnv = (chains: Record<DemoNetwork, AnvilNode>): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const network of Object.keys(NETWORKS) as Array<DemoNetwork>) {
    const name = network.toUpperCase()
    env[`CHECKOUT_RPC_URL_${name}`] = chains[network].rpcUrl
    env[`CHECKOUT_TOKEN_${name}_USDC`] = TEST_TOKENS.USDC
    env[`CHECKOUT_TOKEN_${name}_USDT`] = TEST_TOKENS.USDT
    env[`CHECKOUT_CONFIRMATIONS_${name}`] = String(CONFIRMATIONS)
    env[`CHECKOUT_POLL_INTERVAL_MS_${name}`] = "500"
  }
  return env
}

/** `npm start`'s entry point with the demo merchant on the data directory's embedded database; its output is passed on, the demo API key kept. */
const startService = (port: number, directory: string | undefined, env: Record<string, string>) => {
  const child = spawn(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", join(import.meta.dirname, "..", "src", "main.ts")], {
    env: { ...process.env, CHECKOUT_DATA_DIR: directory === undefined ? "memory://" : databaseDir(directory), CHECKOUT_DEMO: "true", ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"]
  })
  const apiKey = new Promise<string | undefined>((found) => {
    const lines = createInterface({ input: child.stdout! })
    lines.on("line", (line) => {
      console.log(line)
      const key = /^Demo API key: (\S+)$/.exec(line)
      if (key !== null) found(key[1])
    })
    lines.once("close", () => found(undefined))
  })
  return { child, apiKey }
}

const exited = (child: ChildProcess) => new Promise<void>((done) => child.exitCode !== null || child.signalCode !== null ? done() : child.once("exit", () => done()))

/** Waits until the service answers its liveness route, or fails when it exits first. */
const waitUntilListening = async (child: ChildProcess, baseUrl: string) => {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error("the service stopped at start (see above)")
    try {
      if ((await fetch(`${baseUrl}/api/health`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 200))
  }
}

const howToPay = (state: DemoState, apiKey: string | undefined) =>
  [
    "",
    `Local chains: ethereum ${state.chains.ethereum.rpcUrl} (chain id 1), base ${state.chains.base.rpcUrl} (chain id 8453),`,
    `a block a second, ${CONFIRMATIONS} confirmations; test USDC at ${TEST_TOKENS.USDC}, USDT at ${TEST_TOKENS.USDT}; payer ${state.payer}.`,
    "Pay an invoice with a real token transfer (first ethereum or base option, its whole amount, unless given):",
    `  curl -s -X POST ${state.serviceUrl}/api/checkout/invoices -H 'Content-Type: application/json' -H 'X-Api-Key: ${apiKey ?? "<your key>"}' -d '{"amountUsd": 25.5}'`,
    "  npm run demo:chain -- pay <invoiceId> [paymentOptionId] [amount]",
    `Then watch ${state.serviceUrl}/pay/<invoiceId> go to confirmed. Ctrl-C stops the service and the chains.`,
    ""
  ].join("\n")

/** Printed first: where the chains listen and what is kept. */
const startBanner = (chains: Record<DemoNetwork, AnvilNode>, directory: string | undefined) =>
  [
    ...(Object.keys(NETWORKS) as Array<DemoNetwork>).map((network) => `${network}: anvil at ${chains[network].rpcUrl} (chain id ${chains[network].chainId})`),
    directory === undefined
      ? "data: memory:// (nothing is kept)"
      : `data: ${directory} (database and both chains, kept between runs; delete it to start over)`
  ].join("\n")

const startDemo = async () => {
  const port = await listenPort()
  const directory = dataDir()
  checkDataDir(directory)
  if (directory !== undefined) mkdirSync(directory, { recursive: true })
  const [ethereum, base] = await Promise.all([startChain("ethereum", directory), startChain("base", directory)])
  const chains = { ethereum, base }
  console.log(startBanner(chains, directory))
  const stopChains = () => Promise.all([ethereum.stop(), base.stop()])
  const service = startService(port, directory, chainEnv(chains))
  const state: DemoState = {
    pid: process.pid,
    serviceUrl: `http://127.0.0.1:${port}`,
    payer: ethereum.accounts[1],
    chains: { ethereum: { rpcUrl: ethereum.rpcUrl, chainId: ethereum.chainId }, base: { rpcUrl: base.rpcUrl, chainId: base.chainId } }
  }
  const file = statePath()

  let stopping = false
  let wroteState = false
  const stop = async (code: number) => {
    if (stopping) return
    stopping = true
    if (service.child.exitCode === null) service.child.kill("SIGTERM")
    await exited(service.child)
    await stopChains()
    // Only this run's own file: a second demo:chain that fails to start leaves a running one's alone.
    if (wroteState) rmSync(file, { force: true })
    process.exit(code)
  }
  process.once("SIGINT", () => void stop(0))
  process.once("SIGTERM", () => void stop(0))
  // The service ends with a signal of its own when the whole process group is stopped: a clean stop too.
  service.child.once("exit", (code, signal) => void stop(code ?? (signal === "SIGTERM" || signal === "SIGINT" ? 0 : 1)))

  await waitUntilListening(service.child, state.serviceUrl).catch(async (error: Error) => {
    console.error(error.message)
    await stop(1)
  })
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(state, null, 2))
  wroteState = true
  console.log(howToPay(state, await service.apiKey))
}

// ---- npm run demo:chain -- pay <invoiceId> [optionId] [amount] ------------------------------------

/** The state of the running `npm run demo:chain`, or a clear failure when none runs. */
const readState = (): DemoState => {
  const file = statePath()
  if (!existsSync(file)) return fail(`no ${file}: start the chains first with npm run demo:chain (same directory, or the same DEMO_CHAIN_STATE)`)
  const state = JSON.parse(readFileSync(file, "utf8")) as DemoState
  try {
    process.kill(state.pid, 0)
  } catch {
    return fail(`npm run demo:chain (process ${state.pid}) is no longer running: start it again`)
  }
  return state
}

interface PayableOption {
  readonly id: string
  readonly network: string
  readonly assetCode: string
  readonly tokenContract: string | null
  readonly optionPayload: { readonly contractAddress?: string; readonly recipient?: string; readonly decimals?: number; readonly paymentAmountAtomic?: string } | null
}

/** The invoice's payment options as the payer's page reads them (public route, no key needed). */
const paymentOptions = async (serviceUrl: string, invoiceId: string): Promise<ReadonlyArray<PayableOption>> => {
  const response = await fetch(`${serviceUrl}/api/checkout/pay/${encodeURIComponent(invoiceId)}`)
  if (!response.ok) return fail(`${response.status} ${await response.text()}`)
  return ((await response.json()) as { paymentOptions: ReadonlyArray<PayableOption> }).paymentOptions
}

/** The option asked for, else the first one on a local chain; only options on the local chains can be paid here. */
const chooseOption = (options: ReadonlyArray<PayableOption>, optionId: string | undefined): PayableOption & { network: DemoNetwork } => {
  const onLocalChain = (option: PayableOption): option is PayableOption & { network: DemoNetwork } => option.network in NETWORKS
  const option = optionId === undefined ? options.find(onLocalChain) : options.find((candidate) => candidate.id === optionId)
  if (option === undefined) return fail(optionId === undefined ? "the invoice has no ethereum or base option" : `the invoice has no option ${optionId}`)
  if (!onLocalChain(option)) return fail(`option ${option.id} is on ${option.network}: only ethereum and base run locally`)
  return option
}

/** Where the option's tokens go (the wallet contract, or the deposit address) and how much, in the token's smallest units. */
const transferOf = (option: PayableOption, amount: string | undefined) => {
  const payload = option.optionPayload
  const to = payload?.contractAddress ?? payload?.recipient
  if (to === undefined || option.tokenContract === null || payload?.paymentAmountAtomic === undefined) {
    return fail(`option ${option.id} has no EVM payment payload`)
  }
  const atomic = amount === undefined ? BigInt(payload.paymentAmountAtomic) : parseUnits(amount, payload.decimals ?? 6)
  return { token: getAddress(option.tokenContract), to: getAddress(to), atomic, decimals: payload.decimals ?? 6 }
}

/** Sends the transfer from the funded anvil account (anvil signs for it) and waits for its block. */
const sendTransfer = async (rpcUrl: string, from: Address, transfer: ReturnType<typeof transferOf>) => {
  const transport = http(rpcUrl, { retryCount: 0 })
  const wallet = createWalletClient({ transport })
  const hash = await wallet.sendTransaction({
    account: from,
    chain: null,
    to: transfer.token,
    data: encodeFunctionData({ abi: TRANSFER_ABI, functionName: "transfer", args: [transfer.to, transfer.atomic] })
  })
  const receipt = await createPublicClient({ transport }).waitForTransactionReceipt({ hash, pollingInterval: 200 })
  if (receipt.status !== "success") return fail(`transaction ${hash} reverted`)
  return receipt
}

const pay = async (invoiceId: string | undefined, optionId: string | undefined, amount: string | undefined) => {
  if (invoiceId === undefined) return fail("usage: npm run demo:chain -- pay <invoiceId> [paymentOptionId] [amount]")
  const state = readState()
  const option = chooseOption(await paymentOptions(state.serviceUrl, invoiceId), optionId)
  const transfer = transferOf(option, amount)
  const receipt = await sendTransfer(state.chains[option.network].rpcUrl, state.payer, transfer)
  const units = Number(transfer.atomic) / 10 ** transfer.decimals
  console.log(`sent ${units} ${option.assetCode} on ${option.network} to ${transfer.to} (option ${option.id})`)
  console.log(`transaction ${receipt.transactionHash} in block ${receipt.blockNumber}; confirmed after ${CONFIRMATIONS} blocks: ${state.serviceUrl}/pay/${invoiceId}`)
}

const [command, ...rest] = process.argv.slice(2)
if (command === undefined) await startDemo()
else if (command === "pay") await pay(rest[0], rest[1], rest[2])
else fail("usage: npm run demo:chain                 (start the chains and the service)\n       npm run demo:chain -- pay <invoiceId> [paymentOptionId] [amount]")
