import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openEvents, startStreamingApp } from "../support/SseClient.ts"

type App = Awaited<ReturnType<typeof startStreamingApp>>
type StreamMerchant = Awaited<ReturnType<App["createMerchant"]>>

const newInvoice = async (merchant: StreamMerchant) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
  expect(created.status).toBe(201)
  return created.body as { id: string; paymentOptions: Array<{ id: string; network: string }> }
}

const pay = async (merchant: StreamMerchant, invoice: { id: string; paymentOptions: Array<{ id: string }> }, amount: string, confirmations = 0, transactionHash?: string) => {
  const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
    body: { paymentOptionId: invoice.paymentOptions[0].id, amount, confirmations, ...(transactionHash === undefined ? {} : { transactionHash }) }
  })
  expect(paid.status, JSON.stringify(paid.body)).toBe(200)
  return paid.body
}

// The embedded database: changes reach the streams through the in-process bus. A short heartbeat,
// a request time-out far shorter than the tests' streams, and a cap of 3 streams per address.
describe("the public status stream (embedded database, in-process bus)", () => {
  let app: App
  let merchant: StreamMerchant

  beforeAll(async () => {
    // 1.5 s: short beside the streams, long enough for a create on a loaded CI machine (200 ms was not).
    app = await startStreamingApp({ heartbeatMs: 300, maxPerClient: 3 }, { requestTimeoutMs: 1_500 })
    merchant = await app.createMerchant()
  }, 120_000)
  afterAll(() => app?.close())

  it("sends the current status at once, then an evidence change, with CORS and without compression", async () => {
    const invoice = await newInvoice(merchant)
    const stream = await openEvents(app.baseUrl, invoice.id, { origin: "https://shop.example", "accept-encoding": "br, gzip" })
    expect(stream.response.status).toBe(200)
    expect(stream.response.headers.get("content-type")).toContain("text/event-stream")
    expect(stream.response.headers.get("access-control-allow-origin")).toBe("*")
    expect(stream.response.headers.get("access-control-allow-credentials")).toBeNull()
    expect(stream.response.headers.get("content-encoding")).toBeNull()
    const first = await stream.nextStatus()
    const polled = await fetch(`${app.baseUrl}/api/checkout/pay/${invoice.id}/status`).then((response) => response.json())
    expect(first?.status).toEqual(polled)
    expect(first?.status.status).toBe("awaiting_payment")

    await pay(merchant, invoice, "5")
    const changed = await stream.nextStatus()
    expect(changed?.status).toMatchObject({ status: "partially_paid", receivedAmountUsd: 5 })
    expect(changed?.id).not.toBe(first?.id)
    await stream.close()
  })

  it("sends a change of confirmations alone (no status change, no outbox event)", async () => {
    const invoice = await newInvoice(merchant)
    const stream = await openEvents(app.baseUrl, invoice.id)
    await stream.nextStatus()
    await pay(merchant, invoice, "20", 1, "0xconfirmations-alone")
    expect((await stream.nextStatus())?.status).toMatchObject({ status: "payment_detected", confirmations: 1 })
    const confirmed = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-confirmations`, { body: { transactionHash: "0xconfirmations-alone", confirmations: 2 } })
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200)
    expect((await stream.nextStatus())?.status).toMatchObject({ status: "payment_detected", confirmations: 2 })
    await stream.close()
  })

  it("resumes with Last-Event-ID: nothing while unchanged, the current status when it changed since", async () => {
    const invoice = await newInvoice(merchant)
    const stream = await openEvents(app.baseUrl, invoice.id)
    const first = (await stream.nextStatus())!
    await stream.close()

    // Unchanged since the id: the first block after the retry hint is a heartbeat, not a status.
    const unchanged = await openEvents(app.baseUrl, invoice.id, { "last-event-id": first.id })
    expect(unchanged.response.status).toBe(200)
    let block = await unchanged.next()
    if (block?.retry !== undefined) block = await unchanged.next()
    expect(block).toEqual({ comment: "heartbeat" })
    await unchanged.close()

    // Changed while disconnected: the current status at once.
    await pay(merchant, invoice, "5")
    const resumed = await openEvents(app.baseUrl, invoice.id, { "last-event-id": first.id })
    const current = await resumed.nextStatus()
    expect(current?.status.status).toBe("partially_paid")
    expect(current?.id).not.toBe(first.id)
    await resumed.close()
  })

  it("sends heartbeat comments while idle", async () => {
    const invoice = await newInvoice(merchant)
    const stream = await openEvents(app.baseUrl, invoice.id)
    await stream.nextStatus()
    expect(await stream.next()).toEqual({ comment: "heartbeat" })
    expect(await stream.next()).toEqual({ comment: "heartbeat" })
    await stream.close()
  })

  it("is not cut by the request time-out: a change long after it still arrives", async () => {
    const invoice = await newInvoice(merchant)
    const stream = await openEvents(app.baseUrl, invoice.id)
    await stream.nextStatus()
    // Several request time-outs (1.5 s) pass, seen as heartbeats (300 ms) on the open stream.
    for (let beat = 0; beat < 20; beat++) expect(await stream.next()).toEqual({ comment: "heartbeat" })
    await pay(merchant, invoice, "5")
    expect((await stream.nextStatus())?.status.status).toBe("partially_paid")
    await stream.close()
  })

  it("ends after the event of a final status; a reconnect holding it gets 204", async () => {
    const invoice = await newInvoice(merchant)
    const stream = await openEvents(app.baseUrl, invoice.id)
    await stream.nextStatus()
    const recorded = await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "Paid by bank transfer" } })
    expect(recorded.status).toBe(200)
    const final = (await stream.nextStatus())!
    expect(final.status.status).toBe("paid_out_of_band")
    expect(await stream.next()).toBeUndefined()

    const again = await openEvents(app.baseUrl, invoice.id, { "last-event-id": final.id })
    expect(again.response.status).toBe(204)
    // Without the id (a new page), the final status once, then the end.
    const fresh = await openEvents(app.baseUrl, invoice.id)
    expect((await fresh.nextStatus())?.status.status).toBe("paid_out_of_band")
    expect(await fresh.next()).toBeUndefined()
  })

  it("stays open after expired and voided: a late payment still reaches the open page (issue #57)", async () => {
    for (const close of ["expire", "void"] as const) {
      const invoice = await newInvoice(merchant)
      const stream = await openEvents(app.baseUrl, invoice.id)
      await stream.nextStatus()
      const closed = close === "expire"
        ? await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-expiry`, { body: {} })
        : await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
      expect(closed.status, JSON.stringify(closed.body)).toBe(200)
      try {
        // The simulated expiry writes twice (the deadline moved to now, then the expiry): on a loaded
        // PostgreSQL the stream may send the first state (options inactive, still awaiting payment) between.
        const first = (await stream.nextStatus())?.status
        const ended = first?.status === "awaiting_payment" && close === "expire" ? (await stream.nextStatus())?.status : first
        expect(ended?.status).toBe(close === "expire" ? "expired" : "voided")
        await pay(merchant, invoice, "20")
        const late = (await stream.nextStatus())!.status
        expect(late.payments.length).toBe(1)
      } finally {
        // a stream left open would hold one of this client's 3 slots in the suite's later tests
        await stream.close()
      }
    }
  })

  it("answers an invalid id 400 and an unknown invoice 404, as the status route does", async () => {
    const invalid = await fetch(`${app.baseUrl}/api/checkout/pay/not-a-uuid/events`)
    const invalidStatus = await fetch(`${app.baseUrl}/api/checkout/pay/not-a-uuid/status`)
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toEqual(await invalidStatus.json())
    const unknown = await fetch(`${app.baseUrl}/api/checkout/pay/${crypto.randomUUID()}/events`)
    expect(unknown.status).toBe(404)
  })

  it("caps the open streams of one client address, and frees a slot when one closes", async () => {
    const invoice = await newInvoice(merchant)
    const streams = await Promise.all([1, 2, 3].map(() => openEvents(app.baseUrl, invoice.id)))
    for (const stream of streams) expect((await stream.nextStatus())?.status.status).toBe("awaiting_payment")
    const refused = await fetch(`${app.baseUrl}/api/checkout/pay/${invoice.id}/events`)
    expect(refused.status).toBe(429)
    expect((await refused.json()).error).toContain("At most 3 open status streams")
    await streams[0].close()
    // The server notices the closed connection shortly after; until then the cap still holds.
    const deadline = Date.now() + 10_000
    while (true) {
      const again = await openEvents(app.baseUrl, invoice.id)
      if (again.response.status === 200) {
        expect((await again.nextStatus())?.status.status).toBe("awaiting_payment")
        await again.close()
        break
      }
      await again.close()
      if (Date.now() > deadline) throw new Error("the closed stream's slot was never freed")
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    for (const stream of streams.slice(1)) await stream.close()
  })

  it("is documented in the OpenAPI as an event stream", async () => {
    const spec = await fetch(`${app.baseUrl}/api/openapi.json`).then((response) => response.json())
    const operation = spec.paths["/api/checkout/pay/{id}/events"].get
    expect(Object.keys(operation.responses["200"].content)).toContain("text/event-stream")
    expect(operation.responses).toHaveProperty("404")
    expect(operation.responses).toHaveProperty("429")
  })
})
