import { Effect } from "effect"
import { type Address, getAddress } from "viem"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { type AnvilNode, startAnvil } from "./Anvil.ts"
import { privateDatabase } from "./PrivateDatabase.ts"
import { type RpcFront, startRpcFront } from "./RpcFront.ts"
import { startTestApp, type TestApp, type TestMerchant } from "./TestApp.ts"

/** The token the EVM endpoint suites pay in (installed on their anvil). */
export const USDC: Address = getAddress("0x00000000000000000000000000000000000a11ce")

/** One anvil, three JSON-RPC fronts before it (a is preferred, then b, c), and an app watching ethereum through them. */
export interface EvmEndpoints {
  readonly node: AnvilNode
  readonly a: RpcFront
  readonly b: RpcFront
  readonly c: RpcFront
  readonly app: TestApp
  /** A merchant paid in USDC on ethereum (address transfers, the demo key). */
  readonly merchant: TestMerchant
  /** An anvil account holding USDC to pay with. */
  readonly payer: Address
  /** One poll of the ethereum watcher. */
  readonly poll: () => Promise<Effect.Success<ReturnType<ChainWatchers["Service"]["poll"]>>>
  readonly close: () => Promise<void>
}

/**
 * Starts the anvil, its three fronts and the app on a private database, with the merchant made
 * and 5 blocks mined and polled. `rpcUrls` lists the fronts as CHECKOUT_RPC_URL_ETHEREUM;
 * `environment` adds to the app's (2 confirmations, a 1 s RPC time-out).
 */
export const startEvmEndpoints = async (options: {
  readonly rpcUrls: (a: RpcFront, b: RpcFront, c: RpcFront) => string
  readonly environment?: Readonly<Record<string, string>>
}): Promise<EvmEndpoints> => {
  const node = await startAnvil({ chainId: 1 })
  await node.installToken(USDC)
  const payer = node.accounts[1]
  await node.mint(USDC, payer, 1_000_000_000_000n)
  const [a, b, c] = await Promise.all([0, 1, 2].map(() => startRpcFront(node.rpcUrl, "jsonrpc")))
  const database = await privateDatabase()
  const app = await startTestApp({}, {
    ...(database.url === undefined ? {} : { DATABASE_URL: database.url }),
    CHECKOUT_RPC_URL_ETHEREUM: options.rpcUrls(a, b, c),
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: "2",
    ...options.environment
  })
  const merchant = await app.createMerchant({
    methods: [{ network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }]
  })
  const poll = () => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("ethereum")))
  await node.mine(5)
  await poll()
  const close = async () => {
    await app.close()
    await Promise.all([a, b, c].map((front) => front.close()))
    await node.stop()
    await database.drop()
  }
  return { node, a, b, c, app, merchant, payer, poll, close }
}
