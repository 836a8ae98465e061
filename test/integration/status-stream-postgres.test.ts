import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { openEvents, startStreamingApp } from "../support/SseClient.ts"

const server = process.env.DATABASE_URL !== undefined
if (!server) console.log("status-stream-postgres: skipped, the streams hear other instances through LISTEN on a PostgreSQL server only (DATABASE_URL)")

type App = Awaited<ReturnType<typeof startStreamingApp>>

// Two instances on one database: the change is made through one, the stream is open on the other,
// whose in-process bus never sees the write: only the outbox's NOTIFY can bring it.
describe.skipIf(!server)("the public status stream across instances (PostgreSQL, LISTEN)", () => {
  let writer: App
  let reader: App
  let database: Awaited<ReturnType<typeof privateDatabase>>

  beforeAll(async () => {
    database = await privateDatabase()
    writer = await startStreamingApp({}, {}, { DATABASE_URL: database.url! })
    reader = await startStreamingApp({ heartbeatMs: 300 }, {}, { DATABASE_URL: database.url! })
  }, 120_000)
  afterAll(async () => {
    await reader?.close()
    await writer?.close()
    await database?.drop()
  })

  it("brings an evidence change made on another instance to an open stream, and resumes with Last-Event-ID", async () => {
    const merchant = await writer.createMerchant()
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
    expect(created.status).toBe(201)
    const invoice = created.body as { id: string; paymentOptions: Array<{ id: string }> }
    const simulate = (amount: string, transactionHash: string) =>
      merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, { body: { paymentOptionId: invoice.paymentOptions[0].id, amount, transactionHash } })

    const stream = await openEvents(reader.baseUrl, invoice.id)
    const first = (await stream.nextStatus())!
    expect(first.status.status).toBe("awaiting_payment")
    expect((await simulate("5", "0xfirst")).status).toBe(200)
    const changed = (await stream.nextStatus())!
    expect(changed.status).toMatchObject({ status: "partially_paid", receivedAmountUsd: 5 })
    await stream.close()

    // Changed while disconnected: the resumed stream sends the current status at once.
    expect((await simulate("15", "0xsecond")).status).toBe(200)
    const resumed = await openEvents(reader.baseUrl, invoice.id, { "last-event-id": changed.id })
    expect((await resumed.nextStatus())?.status).toMatchObject({ status: "payment_detected", receivedAmountUsd: 20 })
    await resumed.close()
  })

  it("does not miss an outbox event that commits after a later one (ids commit out of order)", async () => {
    const merchant = await writer.createMerchant()
    const create = async () => {
      const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
      expect(created.status).toBe(201)
      return created.body as { id: string; paymentOptions: Array<{ id: string }> }
    }
    const held = await create()
    const later = await create()
    const heldStream = await openEvents(reader.baseUrl, held.id)
    const laterStream = await openEvents(reader.baseUrl, later.id)
    expect((await heldStream.nextStatus())?.status.status).toBe("awaiting_payment")
    expect((await laterStream.nextStatus())?.status.status).toBe("awaiting_payment")

    // A transaction takes the lower outbox id and holds it; a later change commits first.
    const client = new pg.Client({ connectionString: database.url! })
    await client.connect()
    try {
      await client.query("BEGIN")
      await client.query("UPDATE invoices SET status = 'voided' WHERE id = $1", [held.id])
      await client.query("INSERT INTO outbox (invoice_id, merchant_id, event) VALUES ($1, $2, 'invoice_voided')", [held.id, merchant.merchantId])
      const paid = await merchant.dashboard(`/api/dev/invoices/${later.id}/simulate-payment`, { body: { paymentOptionId: later.paymentOptions[0].id, amount: "5" } })
      expect(paid.status).toBe(200)
      expect((await laterStream.nextStatus())?.status.status).toBe("partially_paid")
      await client.query("COMMIT")
    } finally {
      await client.end()
    }
    expect((await heldStream.nextStatus())?.status.status).toBe("voided")
    await laterStream.close()
    await heldStream.close()
  })
})
