import type { ChildProcess } from "node:child_process"
import { existsSync } from "node:fs"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { type EsploraSimulator, startEsploraSimulator } from "../support/EsploraSimulator.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { startService } from "../support/ServiceProcess.ts"
import type { OptionJson } from "../support/Answers.ts"
import type { JsonBody } from "../support/Json.ts"

/**
 * The payer page served by an API process (CHECKOUT_ROLE=api) while a workers process
 * (CHECKOUT_ROLE=workers) watches the chain, on one PostgreSQL database: every confirmation the
 * watcher records reaches the page through the database's NOTIFY (migration 0019), in place.
 */
const databaseUrl = process.env.DATABASE_URL
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const ready = databaseUrl !== undefined && databaseUrl !== "" && existsSync(CHROMIUM)
if (!ready) console.log("skipped: the payer page across an api and a workers process (needs DATABASE_URL, and chromium)")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Instance {
  readonly role: "api" | "workers"
  process?: ChildProcess
  output: string
  port: number
}

describe.skipIf(!ready)("the payer page with api and workers as separate processes on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof privateDatabase>>
  let chain: EsploraSimulator
  let browser: Browser
  const instances: Array<Instance> = []

  const start = async (role: Instance["role"]) => {
    const { freePort } = await import("../../scripts/bench/shared.ts")
    const instance: Instance = { role, output: "", port: await freePort() }
    instances.push(instance)
    await startService(instance, {
      label: role,
      port: instance.port,
      keep: 100_000,
      startMs: 90_000,
      env: {
        CHECKOUT_DEMO: "false",
        CHECKOUT_ROLE: role,
        DATABASE_URL: database.url,
        REDIS_URL: "",
        CHECKOUT_ESPLORA_URL: chain.url,
        CHECKOUT_POLL_INTERVAL_MS_BITCOIN: "200",
        CHECKOUT_CONFIRMATIONS_BITCOIN: "20"
      },
      // The workers process serves no HTTP: it is up once it leads the chain watcher.
      ...(role === "workers" ? { ready: () => instance.output.includes("Leading the chain watcher") } : {})
    })
    return `http://127.0.0.1:${instance.port}`
  }

  const call = async (baseUrl: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: { "content-type": "application/json", ...init.headers },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
    })
    return { status: response.status, body: await response.json().catch(() => null) as JsonBody }
  }

  /** A merchant paid in bitcoin and an invoice of it, through the API process. */
  const bitcoinInvoice = async (api: string) => {
    const signup = await call(api, "/api/auth/signup", { body: { email: `${crypto.randomUUID()}@merchant.test`, password: "a long passphrase here" } })
    expect(signup.status).toBe(201)
    const bearer = { authorization: `Bearer ${signup.body.token}` }
    const settings = await call(api, "/api/dashboard/checkout-settings", {
      method: "PUT",
      headers: bearer,
      body: {
        paymentTiming: { mode: "immediate", expiresAfterMinutes: 60 },
        paymentMethods: [{ network: "bitcoin", assetCode: "BTC", railType: "address_transfer", xpub: DEMO_KEYS.bitcoinZpub }]
      }
    })
    expect(settings.status, JSON.stringify(settings.body)).toBe(200)
    const key = await call(api, `/api/users/${signup.body.user.id}/checkout-api-key`, { headers: bearer, body: { label: "page" } })
    expect(key.status).toBe(201)
    // The workers fill the address pool after the settings are saved: a create may ask to retry.
    for (let attempt = 0; attempt < 100; attempt++) {
      const created = await call(api, "/api/checkout/invoices", { headers: { "x-api-key": key.body.rawKey }, body: { amountUsd: 65 } })
      if (created.status === 201) {
        const option = created.body.paymentOptions.find((candidate: OptionJson) => candidate.network === "bitcoin")
        return { id: created.body.id as string, address: option.destinationAddress as string, sats: BigInt(Math.round(option.quotedAmount * 1e8)) }
      }
      expect(created.status, JSON.stringify(created.body)).toBe(503)
      await sleep(300)
    }
    throw new Error("no invoice with a bitcoin address")
  }

  beforeAll(async () => {
    database = await privateDatabase()
    chain = await startEsploraSimulator({ blockSeconds: 1 })
    chain.mine(3)
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    for (const instance of instances) instance.process?.kill("SIGKILL")
    await chain?.close()
    await database?.drop()
  })

  it("shows each of 20 confirmations seen by the workers process on a page served by the api process, with one navigation", async () => {
    const api = await start("api")
    await start("workers")
    const invoice = await bitcoinInvoice(api)
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    const problems: Array<string> = []
    const navigations: Array<string> = []
    page.on("pageerror", (error) => problems.push(error.message))
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text())
    })
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) navigations.push(frame.url())
    })
    try {
      await page.goto(`${api}/pay/${invoice.id}`)
      await page.locator(".status-awaiting_payment").waitFor()
      chain.pay([{ address: invoice.address, sats: invoice.sats }])
      const latencies: Array<number> = []
      for (let count = 1; count <= 20; count++) {
        const since = Date.now()
        chain.mine(1)
        if (count < 20) {
          await expect.poll(() => page.locator(".status .confirmations").textContent().catch(() => null), { timeout: 30_000 }).toBe(String(count))
        } else await page.locator(".status-confirmed").waitFor({ timeout: 30_000 })
        latencies.push(Date.now() - since)
      }
      expect(navigations, "the first load only").toHaveLength(1)
      expect(problems).toEqual([])
      latencies.sort((a, b) => a - b)
      console.log(
        `pay page in place (PostgreSQL, api + workers): 20 confirmations, ${navigations.length} navigation, block to screen median ${latencies[10]} ms, max ${latencies[19]} ms`
      )
    } finally {
      await context.close()
    }
  }, 300_000)
})
