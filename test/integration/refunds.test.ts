import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { RefundId } from "../../src/domain/Ids.ts"
import { RefundWatch } from "../../src/refunds/RefundWatch.ts"
import { PUBLIC_URL, publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { newPath, webhookHarness } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"
import type { JsonBody } from "../support/Json.ts"

let app: TestApp
let merchant: TestMerchant
let receiver: WebhookReceiver
let harness: ReturnType<typeof webhookHarness>

beforeAll(async () => {
  receiver = await startWebhookReceiver()
  // API-only: no background workers; the tests run the dispatcher themselves.
  app = await startTestApp({ role: "api", webhookAllowLoopback: true, refundRequestRateLimitPerMinute: 1_000_000 })
  harness = webhookHarness(app)
  merchant = await app.createMerchant()
})
afterEach(() => harness.parkDeliveries())
afterAll(async () => {
  await app?.close()
  await receiver?.close()
})

const PAYER_EVM = "0x52908400098527886E0F7030069857D2E4169EE7"
const OTHER_EVM = "0xde709f2102306220921060314715629080e2fb77"
const PAYER_BTC = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
const REFUND_EVENTS = ["refund_requested", "refund_completed", "refund_rejected"]

const newInvoice = async (owner: TestMerchant, amountUsd = 20) => {
  const { body } = await owner.api("/api/checkout/invoices", { body: { amountUsd } })
  const option = (network: string) => body.paymentOptions.find((candidate: JsonBody) => candidate.network === network)
  return { invoice: body, ethereum: option("ethereum"), bitcoin: option("bitcoin"), solana: option("solana") }
}

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

const simulatePayment = async (owner: TestMerchant, invoiceId: string, paymentOptionId: string, amount: string, transactionHash = txHash()) => {
  const paid = await owner.dashboard(`/api/dev/invoices/${invoiceId}/simulate-payment`, { body: { paymentOptionId, amount, confirmations: 1_000, transactionHash } })
  expect(paid.status).toBe(200)
  return transactionHash
}

const refundsOf = (invoiceId: string) => publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/refunds`)
const requestRefund = (invoiceId: string, body: Record<string, unknown>) =>
  publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/refunds`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

/** An invoice of 20 USD overpaid by 5 USDC on ethereum, confirmed. */
const overpaid = async (owner: TestMerchant) => {
  const created = await newInvoice(owner, 20)
  const first = await simulatePayment(owner, created.invoice.id, created.ethereum.id, "20")
  const second = await simulatePayment(owner, created.invoice.id, created.ethereum.id, "5")
  return { ...created, first, second }
}

const outboxOf = (invoiceId: string) =>
  app.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ event: string; refundId: string | null }>`SELECT event, refund_id FROM outbox WHERE invoice_id = ${invoiceId} ORDER BY id`)
  )

const watch = <A>(use: (refunds: RefundWatch["Service"]) => Effect.Effect<A>) => app.run(Effect.flatMap(RefundWatch, use))

describe("refunds over HTTP", () => {
  it("refunds an overpayment once, to one address, and lets the merchant reject it", async () => {
    const { ethereum, invoice } = await overpaid(merchant)

    const before = await refundsOf(invoice.id)
    expect(before.status).toBe(200)
    expect(before.body).toEqual({
      refundable: [{ paymentOptionId: ethereum.id, network: "ethereum", assetCode: "USDC", amount: "5", amountAtomic: "5000000", reason: "overpayment" }],
      refunds: [],
      signatureDomain: new URL(PUBLIC_URL).host
    })

    const misspelt = PAYER_EVM.replace("E7", "e7")
    expect(await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: misspelt })).toMatchObject({
      status: 400,
      body: { error: "refundAddress must be a valid ethereum address" }
    })
    expect(await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM, email: "not an email" })).toMatchObject({
      status: 400,
      body: { error: "email must be a valid email address" }
    })
    expect(await requestRefund(invoice.id, { paymentOptionId: crypto.randomUUID(), refundAddress: PAYER_EVM })).toMatchObject({
      status: 404,
      body: { error: "Payment option not found" }
    })
    expect(await requestRefund(crypto.randomUUID(), { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM })).toMatchObject({
      status: 404,
      body: { error: "Invoice not found" }
    })

    const created = await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM, email: "payer@example.com" })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: expect.any(String),
      paymentOptionId: ethereum.id,
      network: "ethereum",
      assetCode: "USDC",
      amount: "5",
      refundAddress: PAYER_EVM,
      status: "requested",
      transactionHash: null,
      requestedAt: expect.any(String),
      completedAt: null,
      rejectionNote: null,
      verified: false
    })

    // The same address in another case is the same address: the existing refund answers.
    const repeat = await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM.toLowerCase() })
    expect(repeat.status).toBe(200)
    expect(repeat.body).toEqual(created.body)
    // Once the merchant chose a request (docs/refunds.md), the option takes no other address.
    expect(await merchant.dashboard(`/api/dashboard/refunds/${created.body.id}/choose`, { method: "POST" })).toMatchObject({ status: 200 })
    expect(await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: OTHER_EVM })).toMatchObject({
      status: 409,
      body: { error: "A refund was already requested for this payment option" }
    })

    const after = await refundsOf(invoice.id)
    expect(after.body).toEqual({ refundable: [], refunds: [created.body], signatureDomain: new URL(PUBLIC_URL).host })

    const listed = await merchant.dashboard("/api/dashboard/refunds?status=requested")
    expect(listed.status).toBe(200)
    const mine = listed.body.data.find((refund: JsonBody) => refund.id === created.body.id)
    expect(mine).toMatchObject({ invoiceId: invoice.id, amount: "5", amountAtomic: "5000000", payerEmail: "payer@example.com", reason: "overpayment" })
    expect(mine).not.toHaveProperty("merchantId")
    expect(mine.paymentRequest).toMatchObject({
      uri: `ethereum:${mine.tokenContract}@1/transfer?address=${PAYER_EVM}&uint256=5000000`,
      recipient: PAYER_EVM,
      tokenContract: mine.tokenContract,
      reference: null
    })
    expect(mine.paymentRequest.qrCode).toMatch(/^<svg/)
    expect((await merchant.dashboard("/api/dashboard/refunds?status=rejected")).body.data.map((refund: JsonBody) => refund.id)).not.toContain(created.body.id)
    expect(await merchant.dashboard("/api/dashboard/refunds?status=lost")).toMatchObject({ status: 400 })
    const ofInvoice = await merchant.dashboard(`/api/dashboard/invoices/${invoice.id}/refunds`)
    expect(ofInvoice.body.data.map((refund: JsonBody) => refund.id)).toEqual([created.body.id])

    expect(await merchant.dashboard(`/api/dashboard/refunds/${created.body.id}/reject`, { body: { note: "" } })).toMatchObject({ status: 400 })
    const rejected = await merchant.dashboard(`/api/dashboard/refunds/${created.body.id}/reject`, { body: { note: "Kept as store credit" } })
    expect(rejected).toMatchObject({ status: 200, body: { id: created.body.id, status: "rejected", rejectionNote: "Kept as store credit" } })
    expect(rejected.body.rejectedAt).not.toBeNull()
    expect(await merchant.dashboard(`/api/dashboard/refunds/${created.body.id}/reject`, { body: { note: "twice" } })).toMatchObject({
      status: 409,
      body: { error: "Only a requested refund can be rejected" }
    })
    // Rejected is final: the payer sees the note, and the option refunds nothing more.
    const final = await refundsOf(invoice.id)
    expect(final.body.refunds[0]).toMatchObject({ status: "rejected", rejectionNote: "Kept as store credit" })
    expect(final.body.refundable).toEqual([])
    expect(await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM })).toMatchObject({ status: 200, body: { status: "rejected" } })
  })

  it("refunds nothing of an exactly paid invoice, and everything of one closed unpaid", async () => {
    const exact = await newInvoice(merchant, 20)
    await simulatePayment(merchant, exact.invoice.id, exact.ethereum.id, "20")
    expect((await refundsOf(exact.invoice.id)).body.refundable).toEqual([])
    expect(await requestRefund(exact.invoice.id, { paymentOptionId: exact.ethereum.id, refundAddress: PAYER_EVM })).toMatchObject({
      status: 409,
      body: { error: "Nothing to refund on this payment option" }
    })

    const { bitcoin, invoice } = await newInvoice(merchant, 20)
    await simulatePayment(merchant, invoice.id, bitcoin.id, "0.0001")
    expect((await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-expiry`, { method: "POST" })).body).toMatchObject({
      status: "expired",
      exceptionStatus: "open"
    })
    // An open exception awaits the merchant's decision: nothing is refundable yet.
    expect((await refundsOf(invoice.id)).body.refundable).toEqual([])
    const closed = await merchant.dashboard(`/api/dashboard/invoices/${invoice.id}/exception/close`, { body: { action: "close_unpaid", note: "Refund it" } })
    expect(closed.status).toBe(200)
    expect((await refundsOf(invoice.id)).body.refundable).toEqual([
      { paymentOptionId: bitcoin.id, network: "bitcoin", assetCode: "BTC", amount: "0.0001", amountAtomic: "10000", reason: "close_unpaid" }
    ])
    expect(await requestRefund(invoice.id, { paymentOptionId: bitcoin.id, refundAddress: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx" })).toMatchObject({
      status: 400,
      body: { error: "refundAddress must be a valid bitcoin address" }
    })
    const refund = await requestRefund(invoice.id, { paymentOptionId: bitcoin.id, refundAddress: PAYER_BTC.toUpperCase() })
    expect(refund).toMatchObject({ status: 201, body: { amount: "0.0001", refundAddress: PAYER_BTC } })
    const listed = await merchant.dashboard(`/api/dashboard/invoices/${invoice.id}/refunds`)
    expect(listed.body.data[0].paymentRequest.uri).toBe(`bitcoin:${PAYER_BTC}?amount=0.0001`)
  })

  it("keeps one merchant's refunds from another", async () => {
    const { ethereum, invoice } = await overpaid(merchant)
    const refund = await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM })
    const stranger = await app.createMerchant()
    expect(await stranger.dashboard(`/api/dashboard/invoices/${invoice.id}/refunds`)).toMatchObject({ status: 404, body: { error: "Invoice not found" } })
    expect(await stranger.dashboard(`/api/dashboard/refunds/${refund.body.id}/reject`, { body: { note: "mine now" } })).toMatchObject({
      status: 404,
      body: { error: "Refund not found" }
    })
    expect((await stranger.dashboard("/api/dashboard/refunds")).body.data).toEqual([])
    expect(await stranger.dashboard(`/api/dashboard/refunds/${refund.body.id}/prepare-solana-transaction`, { body: { payerPublicKey: "x" } })).toMatchObject({
      status: 404
    })
    // Not a Solana refund: no Solana transaction to prepare.
    expect(await merchant.dashboard(`/api/dashboard/refunds/${refund.body.id}/prepare-solana-transaction`, { body: { payerPublicKey: "x" } })).toMatchObject({
      status: 409
    })
    expect(await merchant.api("/api/dashboard/refunds")).toMatchObject({ status: 403 })
  })

  it("sends the refund webhooks only to merchants who enabled them, with the refund", async () => {
    const quiet = await harness.newMerchant()
    const listening = await harness.newMerchant()
    const quietPath = newPath()
    const listeningPath = newPath()
    await harness.configure(quiet, receiver.url(quietPath))
    await harness.configure(listening, receiver.url(listeningPath), ["invoice_confirmed", ...REFUND_EVENTS])
    expect((await listening.dashboard("/api/dashboard/webhook-settings")).body.enabledEvents).toEqual(["invoice_confirmed", ...REFUND_EVENTS])
    for (const owner of [quiet, listening]) {
      const { ethereum, invoice } = await overpaid(owner)
      const refund = await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM })
      expect(refund.status).toBe(201)
      expect(await owner.dashboard(`/api/dashboard/refunds/${refund.body.id}/reject`, { body: { note: "No" } })).toMatchObject({ status: 200 })
      expect((await outboxOf(invoice.id)).filter((row) => row.refundId !== null)).toEqual([
        { event: "refund_requested", refundId: refund.body.id },
        { event: "refund_rejected", refundId: refund.body.id }
      ])
    }
    await harness.runOnce()
    const events = (path: string) => receiver.received(path).map((request) => request.headers["x-checkout-event"])
    expect(events(quietPath).filter((event) => REFUND_EVENTS.includes(String(event)))).toEqual([])
    expect(events(listeningPath).sort()).toEqual(["invoice_confirmed", "refund_rejected", "refund_requested"])
    const requested = receiver.received(listeningPath).map((request) => JSON.parse(request.body)).find((body) => body.event === "refund_requested")
    expect(requested.invoice.status).toBe("confirmed")
    // The latest state at send time, as for the invoice.
    expect(requested.refund).toMatchObject({ status: "rejected", amountAtomic: "5000000", refundAddress: PAYER_EVM, rejectionNote: "No" })
    expect(requested.refund.paymentRequest.uri).toMatch(/^ethereum:/)
    const deliveries = await harness.deliveriesOf(listening)
    expect(deliveries.filter((delivery) => delivery.refundId !== null).map((delivery) => delivery.event).sort()).toEqual(["refund_rejected", "refund_requested"])
  })

  it("rejects a requested refund that an invalidated payment no longer covers", async () => {
    const { ethereum, invoice, second } = await overpaid(merchant)
    const refund = await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM })
    const invalidated = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-invalidation`, { body: { transactionHash: second } })
    expect(invalidated.status).toBe(200)
    expect((await refundsOf(invoice.id)).body.refunds).toEqual([
      { ...refund.body, status: "rejected", rejectionNote: "A payment it refunded was invalidated" }
    ])
    expect((await outboxOf(invoice.id)).filter((row) => row.refundId !== null).map((row) => row.event)).toEqual(["refund_requested", "refund_rejected"])
  })
})

describe("refund addresses where a refund would not stay the payer's (#44)", () => {
  const refused = async (invoiceId: string, paymentOptionId: string, refundAddress: string, error: string) =>
    expect(await requestRefund(invoiceId, { paymentOptionId, refundAddress })).toMatchObject({ status: 400, body: { error } })

  it("refuses the zero, burn and system addresses, token contracts and mints, and any deposit address the service issued", async () => {
    const { ethereum, invoice } = await overpaid(merchant)
    const burn = "refundAddress must not be a burn or system address"
    await refused(invoice.id, ethereum.id, "0x0000000000000000000000000000000000000000", burn)
    await refused(invoice.id, ethereum.id, "0x000000000000000000000000000000000000dEaD", burn)
    await refused(invoice.id, ethereum.id, "0x0000000000000000000000000000000000000001", burn)
    await refused(invoice.id, ethereum.id, ethereum.tokenContract, "refundAddress must not be a token contract")
    await refused(invoice.id, ethereum.id, ethereum.tokenContract.toLowerCase(), "refundAddress must not be a token contract")

    const deposit = "refundAddress must not be a deposit address of this service"
    // Its own deposit address: a refund paid there would also count as a payment.
    const depositOf = (option: JsonBody): string => option.destinationAddress ?? option.optionPayload.contractAddress
    expect(depositOf(ethereum)).toMatch(/^0x[0-9a-fA-F]{40}$/)
    await refused(invoice.id, ethereum.id, depositOf(ethereum), deposit)
    // Another merchant's invoice's deposit address, in lower case.
    const other = await newInvoice(await app.createMerchant())
    await refused(invoice.id, ethereum.id, depositOf(other.ethereum).toLowerCase(), deposit)

    // Nothing was recorded; a payer's own address still is.
    expect((await refundsOf(invoice.id)).body.refunds).toEqual([])
    expect(await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM })).toMatchObject({ status: 201 })
  })

  it("refuses a bitcoin deposit address and Solana's system and token programs", async () => {
    // The address is checked before what the option refunds: no payment is needed to see the refusals.
    const created = await newInvoice(merchant, 20)
    const other = await newInvoice(merchant)
    expect(other.bitcoin.destinationAddress).toMatch(/^bc1/)
    await refused(created.invoice.id, created.bitcoin.id, other.bitcoin.destinationAddress, "refundAddress must not be a deposit address of this service")
    for (const program of ["11111111111111111111111111111111", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"]) {
      expect(await requestRefund(created.invoice.id, { paymentOptionId: created.solana.id, refundAddress: program })).toMatchObject({ status: 400 })
    }
    await refused(created.invoice.id, created.solana.id, "11111111111111111111111111111111", "refundAddress must not be a burn or system address")
    await refused(created.invoice.id, created.solana.id, created.solana.tokenContract, "refundAddress must not be a token contract")
  })

  it("records on the refund that an EVM address was not checked for code when the network has no endpoint", async () => {
    const { ethereum, invoice } = await overpaid(merchant)
    const created = await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: OTHER_EVM })
    expect(created.status).toBe(201)
    const [row] = await app.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ addressNote: string | null }>`SELECT address_note FROM refunds WHERE id = ${created.body.id}`)
    )
    expect(row.addressNote).toMatch(/not checked for contract code/)
  })
})

describe("a merchant's decision that lowers what is refundable", () => {
  it("rejects a refund of an invoice closed unpaid once the merchant accepts a late payment that makes it whole", async () => {
    const created = (await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })).body
    const option = (network: string) => created.paymentOptions.find((candidate: JsonBody) => candidate.network === network)
    await simulatePayment(merchant, created.id, option("base").id, "5")
    await merchant.dashboard(`/api/dev/invoices/${created.id}/simulate-expiry`, { method: "POST" })
    const close = (action: string) => merchant.dashboard(`/api/dashboard/invoices/${created.id}/exception/close`, { body: { action, note: "Reviewed" } })
    expect((await close("close_unpaid")).status).toBe(200)
    const refund = await requestRefund(created.id, { paymentOptionId: option("base").id, refundAddress: PAYER_EVM })
    expect(refund).toMatchObject({ status: 201, body: { amount: "5" } })

    // The payer pays the whole amount late on another option; the merchant accepts it: the invoice
    // keeps its amount from the options in the order of their first payment, base first.
    const late = await merchant.dashboard(`/api/dev/invoices/${created.id}/simulate-payment`, {
      body: { paymentOptionId: option("ethereum").id, amount: "20", confirmations: 1_000, transactionHash: txHash(), late: true }
    })
    expect(late.body.invoice).toMatchObject({ exceptionStatus: "open", exceptionType: "late_payment" })
    expect((await refundsOf(created.id)).body.refundable).toEqual([])
    expect((await close("accept_late_payment")).status).toBe(200)

    const after = await refundsOf(created.id)
    expect(after.body.refunds).toEqual([{ ...refund.body, status: "rejected", rejectionNote: "The merchant accepted the payment it refunded" }])
    expect(after.body.refundable).toEqual([expect.objectContaining({ paymentOptionId: option("ethereum").id, amount: "5", reason: "overpayment" })])
    expect((await outboxOf(created.id)).filter((row) => row.refundId !== null).map((row) => row.event)).toEqual(["refund_requested", "refund_rejected"])
  })
})

describe("the refund endpoints in the OpenAPI document", () => {
  it("lists each with its errors", async () => {
    const { body } = await publicRequest(app.baseUrl, "/api/openapi.json")
    const responses = (path: string, method: string) => Object.keys(body.paths[path][method].responses).sort()
    expect(responses("/api/checkout/pay/{id}/refunds", "get")).toEqual(expect.arrayContaining(["200", "404"]))
    expect(responses("/api/checkout/pay/{id}/refunds", "post")).toEqual(expect.arrayContaining(["200", "201", "400", "404", "409", "429"]))
    expect(body.paths["/api/checkout/pay/{id}/refunds"].post.security).toEqual([])
    expect(responses("/api/dashboard/refunds", "get")).toEqual(expect.arrayContaining(["200", "400", "401"]))
    expect(responses("/api/dashboard/invoices/{id}/refunds", "get")).toEqual(expect.arrayContaining(["200", "404"]))
    expect(responses("/api/dashboard/refunds/{id}/reject", "post")).toEqual(expect.arrayContaining(["200", "404", "409"]))
    expect(responses("/api/dashboard/refunds/{id}/prepare-solana-transaction", "post")).toEqual(expect.arrayContaining(["200", "400", "404", "409", "503"]))
    expect(body.paths["/api/dashboard/webhook-settings"].put.requestBody.content["application/json"].schema).toBeDefined()
    expect(JSON.stringify(body)).toContain("refund_completed")
  })
})

describe("refund observation (the watchers' seam)", () => {
  it("moves a refund through sent and completed, back to requested on a reorganisation, and reports completion", async () => {
    const owner = await harness.newMerchant()
    const path = newPath()
    await harness.configure(owner, receiver.url(path), REFUND_EVENTS)
    const { ethereum, invoice } = await overpaid(owner)
    const requested = await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM })
    const refundId = RefundId.make(requested.body.id)
    const [detail] = (await owner.dashboard(`/api/dashboard/invoices/${invoice.id}/refunds`)).body.data

    const watched = await watch((refunds) => refunds.watched(["ethereum", "base"], true))
    expect(watched.find((refund) => refund.refundId === refundId)).toEqual({
      refundId,
      network: "ethereum",
      key: PAYER_EVM.toLowerCase(),
      token: detail.tokenContract.toLowerCase(),
      toAddress: PAYER_EVM,
      amountAtomic: 5_000_000n
    })
    expect(await watch((refunds) => refunds.watched(["bitcoin"], true))).not.toContainEqual(expect.objectContaining({ refundId }))

    const transfer = { refundId, transactionHash: txHash(), outputIndex: 3, blockHeight: 100n, blockHash: "0xaa", observedAt: new Date() }
    await watch((refunds) => refunds.observe({ ...transfer, confirmations: 1 }))
    expect((await refundsOf(invoice.id)).body.refunds[0]).toMatchObject({ status: "sent", transactionHash: transfer.transactionHash, completedAt: null })
    expect(await watch((refunds) => refunds.awaiting("ethereum", true))).toContainEqual({ ...transfer, confirmations: 1, observedAt: expect.any(Date) })
    // Another transfer to the same refund is ignored: the first one wins.
    await watch((refunds) => refunds.observe({ ...transfer, transactionHash: txHash(), confirmations: 50 }))
    expect((await refundsOf(invoice.id)).body.refunds[0]).toMatchObject({ status: "sent", transactionHash: transfer.transactionHash })
    // A merchant cannot reject a refund already on its way.
    expect(await owner.dashboard(`/api/dashboard/refunds/${refundId}/reject`, { body: { note: "late" } })).toMatchObject({ status: 409 })

    await watch((refunds) => refunds.observe({ ...transfer, confirmations: detail.requiredConfirmations }))
    const completed = (await refundsOf(invoice.id)).body.refunds[0]
    expect(completed).toMatchObject({ status: "completed", transactionHash: transfer.transactionHash })
    expect(completed.completedAt).not.toBeNull()
    expect(await watch((refunds) => refunds.awaiting("ethereum", true))).not.toContainEqual(expect.objectContaining({ refundId }))
    // Observing again changes nothing (no second event).
    await watch((refunds) => refunds.observe({ ...transfer, confirmations: detail.requiredConfirmations + 5 }))

    expect(await watch((refunds) => refunds.invalidateAbove("ethereum", 100n, true))).toBe(0)
    expect(await watch((refunds) => refunds.invalidateAbove("ethereum", 99n, true))).toBeGreaterThanOrEqual(1)
    expect((await refundsOf(invoice.id)).body.refunds[0]).toMatchObject({ status: "requested", transactionHash: null, completedAt: null })
    expect((await watch((refunds) => refunds.watched(["ethereum"], true))).map((refund) => refund.refundId)).toContain(refundId)

    expect((await outboxOf(invoice.id)).filter((row) => row.refundId !== null).map((row) => row.event)).toEqual(["refund_requested", "refund_completed"])
    await harness.runOnce()
    const bodies = receiver.received(path).map((request) => JSON.parse(request.body))
    expect(bodies.map((body) => body.event).sort()).toEqual(["refund_completed", "refund_requested"])
    expect(bodies.find((body) => body.event === "refund_completed").refund).toMatchObject({ id: refundId, invoiceId: invoice.id })
  })
  it("reverts only the refunds bound to a transaction that left the chain, sent or completed, on its network", async () => {
    const bound = await Promise.all([overpaid(merchant), overpaid(merchant)].map(async (created) => {
      const { ethereum, invoice } = await created
      const requested = await requestRefund(invoice.id, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM })
      expect(requested.status).toBe(201)
      return { invoiceId: invoice.id, refundId: RefundId.make(requested.body.id), transactionHash: txHash() }
    }))
    const [{ requiredConfirmations }] = (await merchant.dashboard(`/api/dashboard/invoices/${bound[0].invoiceId}/refunds`)).body.data
    const [completed, sent] = bound
    // Both in the same block: a height says nothing of which one left the chain.
    const at = { outputIndex: 0, blockHeight: 300n, blockHash: "0xcc", observedAt: new Date() }
    await watch((refunds) => refunds.observe({ ...at, ...completed, confirmations: requiredConfirmations }))
    await watch((refunds) => refunds.observe({ ...at, ...sent, confirmations: 1 }))
    const statusOf = async (invoiceId: string) => (await refundsOf(invoiceId)).body.refunds[0]

    expect(await watch((refunds) => refunds.invalidateTransaction("base", sent.transactionHash, true))).toBe(0)
    expect(await watch((refunds) => refunds.invalidateTransaction("ethereum", txHash(), true))).toBe(0)
    expect(await watch((refunds) => refunds.invalidateTransaction("ethereum", sent.transactionHash, true))).toBe(1)
    expect(await statusOf(sent.invoiceId)).toMatchObject({ status: "requested", transactionHash: null })
    expect(await statusOf(completed.invoiceId)).toMatchObject({ status: "completed", transactionHash: completed.transactionHash })
    expect(await watch((refunds) => refunds.invalidateTransaction("ethereum", sent.transactionHash, true))).toBe(0)

    expect(await watch((refunds) => refunds.invalidateTransaction("ethereum", completed.transactionHash, true))).toBe(1)
    expect(await statusOf(completed.invoiceId)).toMatchObject({ status: "requested", transactionHash: null, completedAt: null })
    const watched = (await watch((refunds) => refunds.watched(["ethereum"], true))).map((refund) => refund.refundId)
    expect(watched).toEqual(expect.arrayContaining([completed.refundId, sent.refundId]))
  })
})
