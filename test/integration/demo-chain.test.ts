import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ScriptProcess, scriptEnv, startScript } from "../support/ScriptProcess.ts"

// `npm run demo:chain` as a person runs it: its own processes (anvil twice, the service), the
// key it prints, `pay` as a second command, and a stop that leaves nothing behind.
const stateFile = join(mkdtempSync(join(tmpdir(), "demo-chain-")), "state.json")
const env = scriptEnv({ PORT: "0", DEMO_CHAIN_STATE: stateFile })
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

beforeAll(async () => {
  demo = startScript("scripts/demo-chain.ts", [], env)
  await demo.line(/Ctrl-C stops the service and the chains/)
  apiKey = /Demo API key: (svc_\S+)/.exec(demo.output())![1]
  serviceUrl = state().serviceUrl
}, 180_000)

afterAll(async () => {
  await demo?.stop()
})

describe("npm run demo:chain", () => {
  it("runs anvil at the service's chain ids and prints how to pay", async () => {
    const { chains } = state()
    expect(await chainAnswers(chains.ethereum.rpcUrl)).toBe("0x1")
    expect(await chainAnswers(chains.base.rpcUrl)).toBe("0x2105")
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
})
