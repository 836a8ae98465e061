import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, erc20Abi, getAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { ForwarderSweeper } from "../../src/chains/evm/ForwarderSweeper.ts"
import { CANONICAL_FACTORY, CREATE2_DEPLOYER, CREATE2_DEPLOYER_CODE, ForwarderFactory } from "../../src/payments/Forwarders.ts"
import { forwarderSalt } from "../../src/payments/Forwarders.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { databaseEnv } from "../support/ChainSuites.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import type { JsonBody } from "../support/Json.ts"

const { USDC, USDT } = TEST_TOKENS
const recipient = privateKeyToAccount(generatePrivateKey()).address
const relayerKey = generatePrivateKey()
const relayer = privateKeyToAccount(relayerKey).address

let node: AnvilNode
let app: TestApp
let merchant: TestMerchant
let database: Awaited<ReturnType<typeof privateDatabase>>
let factory: Address

const poll = () => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("ethereum")))
const sweep = () => app.run(Effect.flatMap(ForwarderSweeper, (sweeper) => sweeper.runOnce("ethereum")))
/**
 * Sweeps until a sent sweep's outcome is known: anvil may answer the send before it has mined the
 * transaction, and the sweeper then waits for the next run (it reports nothing for a pending one).
 */
const sweepUntilSettled = async () => {
  for (let attempt = 0; attempt < 50; attempt++) {
    const report = await sweep()
    if (report.sent + report.swept + report.failed > 0) return report
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return sweep()
}
const balanceOf = (token: Address, owner: Address) => node.publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] })
const paymentsOf = (invoiceId: string) =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ sweepStatus: string | null; sweepTransactionHash: string | null; sweepAttempts: number; sweepError: string | null }>`
      SELECT sweep_status, sweep_transaction_hash, sweep_attempts, sweep_error FROM payments WHERE invoice_id = ${invoiceId} ORDER BY observed_at`))

/** Pays an invoice's option on chain and lets the watcher see it reach its 2 confirmations. */
const payAndConfirm = async (token: Address, to: Address, amount: bigint) => {
  await node.transfer(token, node.accounts[1], to, amount)
  await node.mine(1)
  await poll()
}

const createInvoice = async (assetCode: "USDC" | "USDT", amountUsd: number) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  expect(created.status).toBe(201)
  const option = (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((candidate) => candidate.assetCode === assetCode)
  return { id: created.body.id as string, optionId: option.id as string, forwarder: getAddress(option.optionPayload.contractAddress) }
}

beforeAll(async () => {
  node = await startAnvil({ chainId: 1 })
  await node.testClient.setCode({ address: CREATE2_DEPLOYER, bytecode: CREATE2_DEPLOYER_CODE })
  await node.installToken(USDC)
  await node.installToken(USDT, "noReturn")
  await node.mint(USDC, node.accounts[1], 10n ** 12n)
  await node.mint(USDT, node.accounts[1], 10n ** 12n)
  await node.testClient.setBalance({ address: relayer, value: 10n ** 18n })

  // The operator command, as an operator runs it.
  const deployed = spawnSync(join(process.cwd(), "node_modules", ".bin", "node"), [
    "--experimental-strip-types",
    "--disable-warning=ExperimentalWarning",
    "scripts/cli.ts",
    "evm",
    "deploy-factory",
    "--network",
    "ethereum"
  ], { env: { ...process.env, CHECKOUT_RPC_URL_ETHEREUM: node.rpcUrl, CHECKOUT_EVM_RELAYER_KEY: relayerKey }, encoding: "utf8" })
  expect(deployed.status, deployed.stderr).toBe(0)
  factory = getAddress(/CHECKOUT_FORWARDER_FACTORY_ETHEREUM=(0x[0-9a-fA-F]{40})/.exec(deployed.stdout)![1])

  database = await privateDatabase()
  app = await startTestApp({}, {
    ...databaseEnv(database),
    CHECKOUT_RPC_URL_ETHEREUM: node.rpcUrl,
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_TOKEN_ETHEREUM_USDT: USDT,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: "2",
    CHECKOUT_EVM_RELAYER_KEY: relayerKey,
    CHECKOUT_FORWARDER_FACTORY_ETHEREUM: factory
  })
  merchant = await app.createMerchant({
    methods: ["USDC", "USDT"].map((assetCode) => ({
      network: "ethereum" as const,
      assetCode: assetCode as "USDC" | "USDT",
      railType: "wallet_contract" as const,
      enabled: true,
      isDefault: assetCode === "USDC",
      recipientAddress: recipient,
      xpub: null
    }))
  })
  await poll()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await node?.stop()
  await database?.drop()
})

describe("wallet-contract forwarders", () => {
  it("are deployed by the operator command at the canonical address, where the factory predicts the forwarders", async () => {
    expect(factory).toBe(CANONICAL_FACTORY)
    const invoice = await createInvoice("USDC", 1)
    const predicted = await node.publicClient.readContract({
      address: factory,
      abi: ForwarderFactory.abi,
      functionName: "addressOf",
      args: [forwarderSalt(invoice.optionId), recipient]
    })
    expect(predicted).toBe(invoice.forwarder)
  })

  it("receive a payment before any code is there, and the sweeper deploys and empties them to the recipient, again for a second payment", async () => {
    const invoice = await createInvoice("USDC", 25)
    expect(await node.publicClient.getCode({ address: invoice.forwarder })).toBeUndefined()
    await payAndConfirm(USDC, invoice.forwarder, 25_000_000n)
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}`)).body.status).toBe("confirmed")

    const before = await balanceOf(USDC, recipient)
    expect(await sweep()).toMatchObject({ sent: 1 })
    expect(await sweepUntilSettled()).toMatchObject({ swept: 1 })
    expect(await balanceOf(USDC, recipient)).toBe(before + 25_000_000n)
    expect(await balanceOf(USDC, invoice.forwarder)).toBe(0n)
    // The computed address is where the factory deployed the forwarder.
    expect(await node.publicClient.getCode({ address: invoice.forwarder })).not.toBeUndefined()
    const [first] = await paymentsOf(invoice.id)
    expect(first.sweepStatus).toBe("swept")
    expect(first.sweepTransactionHash).toMatch(/^0x[0-9a-f]{64}$/)

    // Funds sent after the invoice is closed are swept too.
    await payAndConfirm(USDC, invoice.forwarder, 3_000_000n)
    expect(await sweep()).toMatchObject({ sent: 1 })
    expect(await sweepUntilSettled()).toMatchObject({ swept: 1 })
    expect(await balanceOf(USDC, recipient)).toBe(before + 28_000_000n)
    expect((await paymentsOf(invoice.id)).map((payment) => payment.sweepStatus)).toEqual(["swept", "swept"])
    // Nothing more to do: nothing is sent twice.
    expect(await sweep()).toMatchObject({ sent: 0, swept: 0, failed: 0 })
  })

  it("work with a token whose transfer returns nothing (USDT on ethereum)", async () => {
    const invoice = await createInvoice("USDT", 4)
    await payAndConfirm(USDT, invoice.forwarder, 4_000_000n)
    const before = await balanceOf(USDT, recipient)
    expect(await sweep()).toMatchObject({ sent: 1 })
    expect(await sweepUntilSettled()).toMatchObject({ swept: 1 })
    expect(await balanceOf(USDT, recipient)).toBe(before + 4_000_000n)
  })

  it("retry a sweep the relayer cannot pay for, and report it until it succeeds", async () => {
    const invoice = await createInvoice("USDC", 2)
    await payAndConfirm(USDC, invoice.forwarder, 2_000_000n)
    await node.testClient.setBalance({ address: relayer, value: 0n })
    expect(await sweep()).toMatchObject({ failed: 1, sent: 0 })
    const [failed] = await paymentsOf(invoice.id)
    expect(failed).toMatchObject({ sweepStatus: "pending", sweepAttempts: 1 })
    expect(failed.sweepError).not.toBeNull()
    // Backing off: not tried again at once.
    expect(await sweep()).toMatchObject({ failed: 0, sent: 0 })
    // Shown to the merchant, and to nobody else.
    const shown = await merchant.dashboard("/api/dashboard/forwarder-sweeps?status=failed")
    expect(shown.status).toBe(200)
    expect(shown.body.data).toHaveLength(1)
    expect(shown.body.data[0]).toMatchObject({ invoiceId: invoice.id, status: "failed", attempts: 1, contractAddress: invoice.forwarder, recipient, amountAtomic: "2000000" })
    expect(shown.body.data[0].lastError).not.toBeNull()
    const stranger = await app.createMerchant()
    expect((await stranger.dashboard("/api/dashboard/forwarder-sweeps")).body).toEqual({ data: [] })

    await node.testClient.setBalance({ address: relayer, value: 10n ** 18n })
    await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE payments SET sweep_next_attempt_at = now() - interval '1 second' WHERE invoice_id = ${invoice.id}`))
    const before = await balanceOf(USDC, recipient)
    expect(await sweep()).toMatchObject({ sent: 1 })
    expect(await sweepUntilSettled()).toMatchObject({ swept: 1 })
    expect(await balanceOf(USDC, recipient)).toBe(before + 2_000_000n)
    const [swept] = await paymentsOf(invoice.id)
    expect(swept).toMatchObject({ sweepStatus: "swept", sweepError: null })
    expect((await merchant.dashboard("/api/dashboard/forwarder-sweeps?status=failed")).body).toEqual({ data: [] })
    const done = (await merchant.dashboard("/api/dashboard/forwarder-sweeps?status=swept")).body.data as ReadonlyArray<JsonBody>
    expect(done.find((entry) => entry.invoiceId === invoice.id)).toMatchObject({ status: "swept", transactionHash: swept.sweepTransactionHash })
  })

  it("keep production from starting with a configured factory that has no code on the chain", async () => {
    const empty = getAddress("0x00000000000000000000000000000000000f00d0")
    const production = { ...databaseEnv(database), CHECKOUT_RPC_URL_ETHEREUM: node.rpcUrl }
    await expect(startTestApp({ env: "production" }, { ...production, CHECKOUT_FORWARDER_FACTORY_ETHEREUM: empty })).rejects.toThrow(
      /CHECKOUT_FORWARDER_FACTORY_ETHEREUM \(0x0+f00[dD]0\) has no code on ethereum/
    )
    const started = await startTestApp({ env: "production" }, { ...production, CHECKOUT_FORWARDER_FACTORY_ETHEREUM: factory })
    await started.close()
  })
})
