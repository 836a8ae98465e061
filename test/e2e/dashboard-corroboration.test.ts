import { existsSync } from "node:fs"
import { Effect } from "effect"
import type { Browser } from "playwright-core"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { ethereumUsdcMethod, startChainApp } from "../support/ChainSuites.ts"
import { type RpcFront, startRpcFront } from "../support/RpcFront.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"
import { signedInPage } from "./DashboardScenes.ts"
import type { JsonBody } from "../support/Json.ts"

// Issue #52 item 4: the dashboard's chain-watchers view tells the operator that payments wait for
// corroboration (how many, how many disputed, since when), in a real browser. Two endpoints in
// front of one anvil; the second goes down while a payment is made.
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const { USDC } = TEST_TOKENS

let node: AnvilNode
let a: RpcFront
let b: RpcFront
let app: TestApp
let merchant: TestMerchant
let browser: Browser
let payer: Address

const poll = () => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("ethereum")))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status

describe.skipIf(!existsSync(CHROMIUM))("the dashboard's chain-watchers view: payments waiting for corroboration", () => {
  beforeAll(async () => {
    node = await startAnvil({ chainId: 1 })
    await node.installToken(USDC)
    payer = node.accounts[1]
    await node.mint(USDC, payer, 1_000_000_000n)
    ;[a, b] = await Promise.all([0, 1].map(() => startRpcFront(node.rpcUrl, "jsonrpc")))
    app = await startChainApp({}, {
      CHECKOUT_RPC_URL_ETHEREUM: `${a.url}, ${b.url}`,
      CHECKOUT_RPC_TIMEOUT_MS: "1000",
      CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
      CHECKOUT_CONFIRMATIONS_ETHEREUM: "2"
    })
    merchant = await app.createMerchant({ methods: [ethereumUsdcMethod] })
    await node.mine(3)
    await poll()
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
    await Promise.all([a, b].map((front) => front?.close()))
    await node?.stop()
  })

  it("shows how many wait and since when while the second endpoint is down, and nothing once it is back", async () => {
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    const invoiceId = created.body.id as string
    b.mode = "error"
    await node.transfer(USDC, payer, getAddress(created.body.paymentOptions[0].destinationAddress), 3_000_000n)
    await poll()
    expect(await statusOf(invoiceId)).toBe("payment_detected")
    const { body } = await merchant.dashboard("/api/dashboard/chain-watchers")
    const since = (body.watchers as ReadonlyArray<JsonBody>).find((entry) => entry.network === "ethereum").awaitingCorroboration.since as string

    const { context, page, problems } = await signedInPage(browser, app, merchant, "desktop")
    await page.goto(`${app.baseUrl}/dashboard#/chain-watchers`)
    const ethereum = page.locator("section[data-network='ethereum']")
    const waiting = ethereum.getByRole("alert").filter({ hasText: "corroborate" })
    await waiting.waitFor({ timeout: 30_000 })
    expect(await waiting.innerText()).toBe(
      `1 transfer(s) wait for another endpoint to corroborate them (0 disputed) since ${since}: detected at 0 confirmations (a refund: sent, not completed), ` +
        "never confirmed until a majority of the endpoints shows them. Add an endpoint to settle a dispute."
    )
    expect(await waiting.isVisible()).toBe(true)

    b.mode = "pass"
    const deadline = Date.now() + 90_000
    while ((await statusOf(invoiceId)) !== "confirmed") {
      if (Date.now() > deadline) throw new Error("not confirmed once the second endpoint was back")
      await sleep(300)
      await node.mine(1)
      await poll().catch(() => undefined)
    }
    await page.reload()
    await ethereum.locator(`tr[data-endpoint='${a.url}']`).waitFor({ timeout: 30_000 })
    expect(await ethereum.getByRole("alert").filter({ hasText: "corroborate" }).count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  }, 180_000)
})
