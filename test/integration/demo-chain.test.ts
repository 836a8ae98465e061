import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_EMAIL, DEMO_PASSWORD } from "../../src/demo/DemoMerchant.ts"
import { type ScriptProcess, scriptEnv, startScript } from "../support/ScriptProcess.ts"

// `npm run demo:chain` as a person runs it: its own processes (anvil twice, the service), the
// key it prints, `pay` as a second command, a stop that leaves no process behind, and a second
// run that finds its data directory again.
const workDir = mkdtempSync(join(tmpdir(), "demo-chain-"))
const stateFile = join(workDir, "state.json")
const dataDir = join(workDir, "data")
const env = scriptEnv({ PORT: "0", DEMO_CHAIN_STATE: stateFile, DEMO_CHAIN_DATA_DIR: dataDir, DEMO_CHAIN_ETHEREUM_PORT: "0", DEMO_CHAIN_BASE_PORT: "0" })
let demo: ScriptProcess
let apiKey: string
let serviceUrl: string

interface DemoState {
  readonly pid: number
  readonly serviceUrl: string
  readonly chains: Record<"ethereum" | "base", { readonly rpcUrl: string; readonly chainId: number }>
}
const state = () => JSON.parse(readFileSync(stateFile, "utf8")) as DemoState

/** Runs `npm run demo:chain -- pay …` to its end. */
const runPay = async (...args: ReadonlyArray<string>) => {
  const pay = startScript("scripts/demo-chain.ts", ["pay", ...args], env)
  const code = await new Promise<number | null>((resolve) => pay.child.once("exit", resolve))
  return { code, output: pay.output() }
}

const invoiceStatus = async (id: string) =>
  (await (await fetch(`${serviceUrl}/api/checkout/invoices/${id}/status`, { headers: { "x-api-key": apiKey } })).json()) as {
    status: string
    confirmations: number
    payments: Array<{ network: string; transactionHash: string; amountReceived: number }>
  }

const chainAnswers = async (rpcUrl: string) => {
  try {
    const response = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) })
    return ((await response.json()) as { result: string }).result
  } catch {
    return null
  }
}

const startDemo = async () => {
  demo = startScript("scripts/demo-chain.ts", [], env)
  await demo.line(/Ctrl-C stops the service and the chains/)
  serviceUrl = state().serviceUrl
}

/** A dashboard session of the demo merchant. */
const demoSession = async () => {
  const login = await fetch(`${serviceUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: DEMO_EMAIL, password: DEMO_PASSWORD })
  })
  return ((await login.json()) as { token: string }).token
}
const webhookUrl = async () => {
  const settings = await fetch(`${serviceUrl}/api/dashboard/webhook-settings`, { headers: { authorization: `Bearer ${await demoSession()}` } })
  return ((await settings.json()) as { url: string | null }).url
}
let paidInvoice: { id: string; hash: string } | undefined

/** Where the first run points the demo merchant's webhooks (nothing listens there: deliveries just fail). */
const WEBHOOK_URL = "http://127.0.0.1:9/webhooks/checkout"

beforeAll(async () => {
  await startDemo()
  apiKey = /Demo API key: (svc_\S+)/.exec(demo.output())![1]
  const saved = await fetch(`${serviceUrl}/api/dashboard/webhook-settings`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${await demoSession()}` },
    body: JSON.stringify({ url: WEBHOOK_URL })
  })
  expect(saved.status).toBe(200)
}, 180_000)

afterAll(async () => {
  await demo?.stop()
  rmSync(workDir, { recursive: true, force: true })
})

describe("npm run demo:chain", () => {
  it("runs anvil at the service's chain ids, prints where they listen and how to pay", async () => {
    const { chains } = state()
    expect(await chainAnswers(chains.ethereum.rpcUrl)).toBe("0x1")
    expect(await chainAnswers(chains.base.rpcUrl)).toBe("0x2105")
    expect(demo.output()).toContain(`ethereum: anvil at ${chains.ethereum.rpcUrl} (chain id 1)`)
    expect(demo.output()).toContain(`base: anvil at ${chains.base.rpcUrl} (chain id 8453)`)
    expect(demo.output()).toContain(`data: ${dataDir} (database and both chains, kept between runs; delete it to start over)`)
    expect(demo.output()).toContain("npm run demo:chain -- pay <invoiceId>")
    expect(demo.output()).toMatch(/Chain watchers: ethereum, base/)
  })

  it("pays an invoice with a real token transfer that the watcher confirms", async () => {
    const created = await fetch(`${serviceUrl}/api/checkout/invoices`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify({ amountUsd: 12.5 })
    })
    expect(created.status).toBe(201)
    const invoice = (await created.json()) as { id: string }

    const paid = await runPay(invoice.id)
    expect(paid.code, paid.output).toBe(0)
    const hash = /transaction (0x[0-9a-f]{64})/.exec(paid.output)![1]

    let status = await invoiceStatus(invoice.id)
    while (status.status !== "confirmed") {
      await new Promise((resolve) => setTimeout(resolve, 250))
      status = await invoiceStatus(invoice.id)
    }
    expect(status.confirmations).toBe(2)
    expect(status.payments).toMatchObject([{ network: "ethereum", transactionHash: hash, amountReceived: 12.5 }])
    paidInvoice = { id: invoice.id, hash }
  }, 120_000)

  it("pay explains an unknown option instead of sending anything", async () => {
    const created = await fetch(`${serviceUrl}/api/checkout/invoices`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify({ amountUsd: 3 })
    })
    const invoice = (await created.json()) as { id: string }
    const paid = await runPay(invoice.id, crypto.randomUUID())
    expect(paid.code).toBe(1)
    expect(paid.output).toMatch(/the invoice has no option/)
  }, 60_000)

  it("stops the service and both chains on SIGTERM to its process group, and removes its state file", async () => {
    const { chains } = state()
    expect(await demo.stop()).toBe(0)
    expect(existsSync(stateFile)).toBe(false)
    expect(await chainAnswers(chains.ethereum.rpcUrl)).toBeNull()
    expect(await chainAnswers(chains.base.rpcUrl)).toBeNull()
    expect(await fetch(`${serviceUrl}/api/health`).then(() => "answers", () => "gone")).toBe("gone")
  }, 60_000)

  it("starts again on its data directory: the same key, webhook settings, invoices and chains", async () => {
    expect(paidInvoice).toBeDefined()
    await startDemo()
    expect(/Demo API key: (svc_\S+)/.exec(demo.output())?.[1]).toBe(apiKey)
    expect(await webhookUrl()).toBe(WEBHOOK_URL)
    expect((await invoiceStatus(paidInvoice!.id)).status).toBe("confirmed")
    // The chain kept its blocks: the payment's transaction is still in it.
    const receipt = await fetch(state().chains.ethereum.rpcUrl, { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionReceipt", params: [paidInvoice!.hash] }) })
    expect(((await receipt.json()) as { result: { status: string } | null }).result?.status).toBe("0x1")
    // A second payment on the kept chain is watched and confirmed as before.
    const created = await fetch(`${serviceUrl}/api/checkout/invoices`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify({ amountUsd: 4 })
    })
    const invoice = (await created.json()) as { id: string }
    expect((await runPay(invoice.id)).code).toBe(0)
    while ((await invoiceStatus(invoice.id)).status !== "confirmed") await new Promise((resolve) => setTimeout(resolve, 250))
  }, 240_000)
})
