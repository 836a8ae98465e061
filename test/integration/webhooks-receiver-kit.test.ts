import { type ChildProcess, spawn } from "node:child_process"
import { type AddressInfo, createServer } from "node:net"
import { createInterface } from "node:readline"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signWebhook } from "../../src/webhooks/Signature.ts"
import { startScript } from "../support/ScriptProcess.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { privateDatabase } from "../support/WebhookHarness.ts"

// The whole service with its background workers (a database of its own, so that its dispatcher
// leaves other suites alone) sending to the example receiver of `npm run example-receiver`.
let database: Awaited<ReturnType<typeof privateDatabase>>
let app: TestApp
let merchant: TestMerchant
let secret: string
let receiver: ChildProcess
let receiverUrl: string
const lines: Array<string> = []
const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = []

/** The next output line of the example receiver that matches, from the moment of the call. */
const nextLine = (pattern: RegExp) => new Promise<string>((resolve) => waiters.push({ pattern, resolve }))

beforeAll(async () => {
  database = await privateDatabase()
  app = await startTestApp({ role: "all", webhookAllowLoopback: true, databaseUrl: database.url })
  merchant = await app.createMerchant()
  secret = (await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })).body.secret
  receiver = spawn(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "scripts/example-receiver.ts"], {
    env: { ...process.env, CHECKOUT_WEBHOOK_SECRET: secret, CHECKOUT_API_KEY: merchant.apiKey, CHECKOUT_URL: app.baseUrl, RECEIVER_PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"]
  })
  createInterface({ input: receiver.stdout! }).on("line", (line) => {
    lines.push(line)
    for (const waiter of waiters.filter((entry) => entry.pattern.test(line))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  })
  receiverUrl = (await nextLine(/^example receiver on /)).replace(/^example receiver on /, "")
  const saved = await merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: receiverUrl } })
  expect(saved.status).toBe(200)
})

afterAll(async () => {
  receiver?.kill()
  await app?.close()
  await database?.drop()
})

const deliverByHand = (event: string, invoice: unknown, signature?: string, url = receiverUrl) => {
  const body = JSON.stringify({ event, invoice })
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-checkout-signature": signature ?? signWebhook(body, secret), "x-checkout-event": event },
    body
  })
}

describe("the example receiver (npm run example-receiver)", () => {
  it("refuses a request whose signature does not verify", async () => {
    for (const signature of ["0".repeat(64), "not hex", `sha256=${signWebhook("{}", secret)}`]) {
      expect((await deliverByHand("invoice_created", { id: crypto.randomUUID() }, signature)).status).toBe(400)
    }
  })

  it("takes the dashboard's test event, which carries no invoice", async () => {
    const verified = nextLine(/^webhook_test: signature verified /)
    expect((await merchant.dashboard("/api/dashboard/webhook-settings/test", { method: "POST" })).status).toBe(200)
    await verified
    expect(receiver.exitCode).toBeNull()
  })

  it("gets the service's webhooks from the background dispatcher and fulfils from the invoice it fetches, once", async () => {
    const created = nextLine(/^invoice_created for /)
    const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5, merchantReference: "order-77" } })
    const pending = nextLine(new RegExp(`^keep ${invoice.id} pending \\(awaiting_payment\\)$`))
    expect(await created).toMatch(new RegExp(`^invoice_created for ${invoice.id} \\(delivery [0-9a-f-]{36}\\)$`))
    await pending

    const fulfilled = nextLine(/^fulfil order order-77$/)
    await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "bank transfer" } })
    await fulfilled
    // At-least-once: a duplicate is recognised by the invoice, not by the event.
    const duplicate = nextLine(new RegExp(`^already fulfilled ${invoice.id}$`))
    expect((await deliverByHand("invoice_payment_recorded", invoice)).status).toBe(204)
    await duplicate
    expect(lines.filter((line) => line.startsWith("fulfil order"))).toEqual(["fulfil order order-77"])

    const log = (await merchant.dashboard("/api/dashboard/webhook-deliveries")).body.deliveries
    expect(log.map((delivery: { event: string; status: string }) => [delivery.event, delivery.status]).sort()).toEqual([
      ["invoice_created", "delivered"],
      ["invoice_payment_recorded", "delivered"]
    ])
  })

  it("answers 503 when it cannot fetch the invoice, so that the service delivers the event again", async () => {
    const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 6, merchantReference: "order-78" } })
    // The same receiver, but the service is out of its reach.
    const offline = startScript("scripts/example-receiver.ts", [], {
      ...process.env,
      CHECKOUT_WEBHOOK_SECRET: secret,
      CHECKOUT_API_KEY: merchant.apiKey,
      CHECKOUT_URL: `http://127.0.0.1:${await closedPort()}`,
      RECEIVER_PORT: "0"
    })
    try {
      const url = (await offline.line(/^example receiver on /)).replace(/^example receiver on /, "")
      await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "bank transfer" } })
      expect((await deliverByHand("invoice_payment_recorded", { id: invoice.id }, undefined, url)).status).toBe(503)
      // The receiver may answer before its log line is read: wait for the line rather than sample the output once.
      await offline.line(new RegExp(`could not check ${invoice.id}, answering 503 so that it is delivered again`))
      expect(offline.output()).not.toContain("fulfil order")
    } finally {
      await offline.stop()
    }
  })
})

/** A loopback port nothing listens on (taken from the OS, then let go). */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
