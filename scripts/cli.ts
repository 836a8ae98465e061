/**
 * Operator commands against the service's database (DATABASE_URL, or the embedded data directory:
 * stop the server first, PGlite serves one process at a time).
 *
 *   npm run cli -- account create <email>     (prints a generated dashboard password once; with sign-up closed, how accounts are made)
 *   npm run cli -- account disable <email>    npm run cli -- account enable <email>
 *   npm run cli -- billing block <email>      npm run cli -- billing unblock <email>
 *   npm run cli -- evm deploy-factory --network <ethereum|arbitrum|base>
 *     (CHECKOUT_EVM_RELAYER_KEY and CHECKOUT_RPC_URL_<NETWORK> set; prints the factory address to configure)
 *   npm run cli -- data move --to <postgres-url>      npm run cli -- migrate      (scripts/cli/database.ts)
 *   npm run cli -- data backup|restore|start-index …   (scripts/cli/DataCommands.ts)
 */
import { Console, Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import type { Hex } from "viem"
import { deployForwarderFactory } from "../src/chains/evm/FactoryDeployment.ts"
import { EVM_CHAIN_IDS, type EvmNetwork, isEvm, type Network } from "../src/payments/Networks.ts"
import { Accounts } from "../src/accounts/Accounts.ts"
import { AppConfig, parseConfig } from "../src/config/AppConfig.ts"
import { DatabaseLive } from "../src/db/Database.ts"
import { DATA_ACTIONS, runDataCommand } from "./cli/DataCommands.ts"

const [area, action, email] = process.argv.slice(2)

if (area === "migrate" || (area === "data" && action === "move")) process.exit(await (await import("./cli/database.ts")).runDatabaseCommand(process.argv.slice(2)))
const usage = "usage: npm run cli -- account create|disable|enable <email> | billing block|unblock <email> | evm deploy-factory --network <network>"

if (area === "data" && DATA_ACTIONS.includes(action as typeof DATA_ACTIONS[number])) await runDataCommand(action, process.argv.slice(4))

if (area === "evm") {
  const network = process.argv[process.argv.indexOf("--network") + 1]
  if (action !== "deploy-factory" || !process.argv.includes("--network") || !isEvm(network as Network)) {
    console.error("usage: npm run cli -- evm deploy-factory --network ethereum|arbitrum|base")
    process.exit(1)
  }
  const config = parseConfig(process.env)
  const rpcUrl = config.chains.endpoints[network as EvmNetwork]
  const key = config.chains.evmRelayerKey
  if (rpcUrl === undefined || key === undefined) {
    console.error(`CHECKOUT_RPC_URL_${network.toUpperCase()} and CHECKOUT_EVM_RELAYER_KEY must be set`)
    process.exit(1)
  }
  const deployed = await deployForwarderFactory(rpcUrl, EVM_CHAIN_IDS[network as EvmNetwork], Redacted.value(key) as Hex)
  console.log(`forwarder factory on ${network}: ${deployed.address} (${deployed.how}${deployed.transactionHash === null ? "" : `, transaction ${deployed.transactionHash}`})`)
  console.log(`configure: CHECKOUT_FORWARDER_FACTORY_${network.toUpperCase()}=${deployed.address}`)
  process.exit(0)
}

const program = Effect.gen(function*() {
  const accounts = yield* Accounts
  if (email === undefined) return yield* Effect.fail(usage)
  const merchant = yield* accounts.findMerchantByEmail(email)
  if (area === "account" && action === "create") {
    if (merchant !== undefined) return yield* Effect.fail(`an account with email ${email} exists already`)
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) return yield* Effect.fail(`not an email address: ${email}`)
    const password = randomBytes(18).toString("base64url")
    yield* accounts.createMerchant({ email, password })
    return yield* Console.log(`account ${email} created; dashboard password (shown once: keep it in a password manager): ${password}`)
  }
  if (merchant === undefined) return yield* Effect.fail(`no account with email ${email}`)
  if (area === "account" && (action === "disable" || action === "enable")) {
    yield* accounts.setStatus(merchant.id, action === "disable" ? "disabled" : "active")
    yield* Console.log(`account ${email} ${action === "disable" ? "disabled (its keys and sessions answer 403 until it is enabled)" : "enabled (cross-account probes forgiven)"}`)
  } else if (area === "billing" && (action === "block" || action === "unblock")) {
    yield* accounts.setBillingStatus(merchant.id, action === "block" ? "blocked" : "active")
    yield* Console.log(`billing of ${email} ${action === "block" ? "blocks" : "allows"} invoice creation`)
  } else {
    return yield* Effect.fail(usage)
  }
})

const layer = Accounts.layer.pipe(
  Layer.provideMerge(DatabaseLive),
  Layer.provideMerge(Layer.succeed(AppConfig, parseConfig(process.env)))
)

Effect.runPromise(program.pipe(Effect.provide(layer))).catch((error: unknown) => {
  console.error(typeof error === "string" ? error : String(error))
  process.exit(1)
})
