import type { ChildProcess } from "node:child_process"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { startEsploraSimulator, type EsploraSimulator } from "../support/EsploraSimulator.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { killService, startService } from "../support/ServiceProcess.ts"
import { startTcpProxy, type TcpProxy } from "../support/TcpProxy.ts"
import type { OptionJson } from "../support/Answers.ts"
import type { JsonBody } from "../support/Json.ts"

/**
 * Chain watcher leadership across two service processes on one PostgreSQL database, each reaching
 * it through a TCP proxy of its own: kill -9 of the leader, and the leader's database connections
 * black-holed (a partition: PostgreSQL keeps hearing nothing, and keeps the session and its lock).
 * Either way the other process takes over within 10 s, the partitioned one steps down, and the
 * watcher's cursor goes on from where it was to the chain's tip.
 */
const databaseUrl = process.env.DATABASE_URL
const ready = databaseUrl !== undefined && databaseUrl !== ""
if (!ready) console.log("skipped: chain watcher leader failover (needs DATABASE_URL: PGlite has one process)")

const TAKEOVER_WITHIN_MS = 10_000
const LEADING = "Leading the chain watcher"
const STEPPED_DOWN = "Lost the chain watchers' leadership connection"
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Instance {
  readonly name: string
  readonly proxy: TcpProxy
  process?: ChildProcess
  output: string
  baseUrl?: string
}

describe.skipIf(!ready)("chain watcher leader failover", () => {
  let database: Awaited<ReturnType<typeof privateDatabase>>
  let chain: EsploraSimulator
  let miner: ReturnType<typeof setInterval> | undefined
  const instances: Array<Instance> = []

  const start = async (instance: Instance) => {
    const { freePort } = await import("../../scripts/bench/shared.ts")
    const port = await freePort()
    const url = new URL(database.url!)
    url.port = String(instance.proxy.port)
    url.hostname = "127.0.0.1"
    instance.baseUrl = `http://127.0.0.1:${port}`
    await startService(instance, {
      label: instance.name,
      port,
      keep: 200_000,
      env: {
        CHECKOUT_DEMO: "false",
        CHECKOUT_ROLE: "all",
        DATABASE_URL: url.toString(),
        REDIS_URL: "",
        CHECKOUT_ESPLORA_URL: chain.url,
        CHECKOUT_POLL_INTERVAL_MS_BITCOIN: "500",
        CHECKOUT_DB_CONNECT_TIMEOUT_MS: "1000"
      }
    })
  }

  const kill9 = killService

  const occurrences = (instance: Instance, text: string) => instance.output.split(text).length - 1

  /** Milliseconds until `instance` logs `text` once more than `before` times (or throws after `limitMs`). */
  const until = async (instance: Instance, text: string, before: number, limitMs: number) => {
    const since = Date.now()
    while (occurrences(instance, text) <= before) {
      if (Date.now() - since > limitMs) throw new Error(`${instance.name} did not log "${text}" within ${limitMs} ms:\n${instance.output.slice(-3000)}`)
      await sleep(20)
    }
    return Date.now() - since
  }

  const cursorHeight = async () => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const { rows } = await client.query(`SELECT processed_height::int AS height FROM chain_cursors WHERE network = 'bitcoin'`)
      return rows[0]?.height as number | undefined
    } finally {
      await client.end()
    }
  }

  /** Sign-up, bitcoin settings, an API key and an invoice through `instance`'s API: its address and amount. */
  const invoiceWithBitcoin = async (instance: Instance) => {
    const call = async (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
      const response = await fetch(`${instance.baseUrl}${path}`, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: { "content-type": "application/json", ...init.headers },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
      })
      return { status: response.status, body: await response.json().catch(() => null) as JsonBody }
    }
    const signup = await call("/api/auth/signup", { body: { email: `${crypto.randomUUID()}@merchant.test`, password: "a long passphrase here" } })
    expect(signup.status).toBe(201)
    const bearer = { authorization: `Bearer ${signup.body.token}` }
    const settings = await call("/api/dashboard/checkout-settings", {
      method: "PUT",
      headers: bearer,
      body: {
        paymentTiming: { mode: "immediate", expiresAfterMinutes: 60 },
        paymentMethods: [{ network: "bitcoin", assetCode: "BTC", railType: "address_transfer", xpub: DEMO_KEYS.bitcoinZpub }]
      }
    })
    expect(settings.status, JSON.stringify(settings.body)).toBe(200)
    const key = await call(`/api/users/${signup.body.user.id}/checkout-api-key`, { headers: bearer, body: { label: "failover" } })
    expect(key.status).toBe(201)
    // The address pool fills right after the settings are saved: a create may ask to retry.
    for (let attempt = 0; attempt < 50; attempt++) {
      const created = await call("/api/checkout/invoices", { headers: { "x-api-key": key.body.rawKey }, body: { amountUsd: 65 } })
      if (created.status === 201) {
        const option = created.body.paymentOptions.find((candidate: OptionJson) => candidate.network === "bitcoin")
        return { id: created.body.id as string, address: option.destinationAddress as string, sats: BigInt(Math.round(option.quotedAmount * 1e8)) }
      }
      expect(created.status, JSON.stringify(created.body)).toBe(503)
      await sleep(200)
    }
    throw new Error("no invoice with a bitcoin address")
  }

  /** The invoice's payment rows and received amount, straight from the database. */
  const countedPayments = async (invoiceId: string) => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const { rows } = await client.query(
        `SELECT transaction_hash, output_index, amount_atomic::text AS amount, invalidated_at FROM payments WHERE invoice_id = $1`,
        [invoiceId]
      )
      return rows as Array<{ transaction_hash: string; amount: string; invalidated_at: Date | null }>
    } finally {
      await client.end()
    }
  }

  /** The watcher reaches the chain's tip: it went on from its saved cursor, whoever leads. */
  const catchesUp = async () => {
    const tip = chain.tipHeight()
    const deadline = Date.now() + 30_000
    while (((await cursorHeight()) ?? -1) < tip) {
      if (Date.now() > deadline) throw new Error(`the cursor is at ${await cursorHeight()}, the tip was at ${tip}`)
      await sleep(100)
    }
  }

  beforeAll(async () => {
    database = await privateDatabase()
    chain = await startEsploraSimulator({ blockSeconds: 1 })
    chain.mine(3)
    const own = new URL(database.url!)
    for (const name of ["A", "B"]) {
      instances.push({ name, proxy: await startTcpProxy({ host: own.hostname, port: Number(own.port || 5432) }), output: "" })
    }
  }, 60_000)

  afterAll(async () => {
    if (miner !== undefined) clearInterval(miner)
    for (const instance of instances) await kill9(instance)
    for (const instance of instances) await instance.proxy.close()
    await chain?.close()
    await database?.drop()
  })

  it(
    "hands the watcher over within 10 s after kill -9 of the leader and after the leader's database is black-holed, with no block skipped and a payment made meanwhile counted once",
    async () => {
      const [a, b] = instances
      await start(a)
      await until(a, LEADING, 0, 30_000)
      await start(b)
      miner = setInterval(() => chain.mine(1), 400)
      await sleep(2_000)
      expect(occurrences(b, LEADING), "one leader at a time").toBe(0)
      await catchesUp()

      // A payment sent while the leader dies and is replaced twice is one payment.
      const invoice = await invoiceWithBitcoin(b)
      const txid = chain.pay([{ address: invoice.address, sats: invoice.sats }])

      // kill -9: the session ends with the process (the proxy passes the close on).
      await kill9(a)
      const afterKill = await until(b, LEADING, 0, TAKEOVER_WITHIN_MS)
      console.log(`leader failover: kill -9 of the leader, taken over after ${afterKill} ms`)
      await catchesUp()

      // Black-holed: PostgreSQL keeps the leader's session and its lock; nothing reaches either side.
      await start(a)
      await sleep(2_000)
      expect(occurrences(a, LEADING), "the restarted instance waits while the other leads").toBe(0)
      const steppedDownBefore = occurrences(b, STEPPED_DOWN)
      b.proxy.blackHole()
      const [takenOver, steppedDown] = await Promise.all([
        until(a, LEADING, 0, TAKEOVER_WITHIN_MS),
        until(b, STEPPED_DOWN, steppedDownBefore, TAKEOVER_WITHIN_MS)
      ])
      console.log(`leader failover: leader's database black-holed, it stepped down after ${steppedDown} ms, taken over after ${takenOver} ms`)
      // The partitioned leader noticed before the other took its place.
      expect(steppedDown).toBeLessThan(takenOver)
      await catchesUp()
      expect(b.process?.exitCode, "the partitioned instance keeps running").toBeNull()
      // No block skipped and nothing counted twice: the payment, mined during the hand-overs, once.
      const payments = await countedPayments(invoice.id)
      expect(payments.map((payment) => [payment.transaction_hash, payment.amount, payment.invalidated_at])).toEqual([[txid, invoice.sats.toString(), null]])
    },
    180_000
  )
})
