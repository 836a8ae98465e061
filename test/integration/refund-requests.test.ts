import { ed25519 } from "@noble/curves/ed25519.js"
import { base58 } from "@scure/base"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RefundId } from "../../src/domain/Ids.ts"
import { refundMessage } from "../../src/refunds/RefundMessage.ts"
import { RefundWatch } from "../../src/refunds/RefundWatch.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { OptionJson, RefundJson } from "../support/Answers.ts"

/**
 * Issue #52: refund requests stand side by side while pending (no 409), a request signed by the
 * address that paid is marked verified and replaces the others, the merchant chooses one. Over real
 * HTTP, with real EIP-191 signatures (viem) and real ed25519 signatures (@noble/curves).
 */

let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp({ role: "api", refundRequestRateLimitPerMinute: 1_000_000 })
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`
const OTHER_EVM = "0xde709f2102306220921060314715629080e2fb77"
const THIRD_EVM = "0x52908400098527886E0F7030069857D2E4169EE7"

/** An invoice of 20 USD overpaid by 5 on the network's option, from `payer`. */
const overpaidBy = async (network: "ethereum" | "solana", payer: string) => {
  const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
  const option = invoice.paymentOptions.find((candidate: OptionJson) => candidate.network === network)
  for (const amount of ["20", "5"]) {
    const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
      body: { paymentOptionId: option.id, amount, confirmations: 1_000,
        transactionHash: network === "ethereum" ? txHash() : base58.encode(crypto.getRandomValues(new Uint8Array(64))), payerAddress: payer }
    })
    expect(paid.status).toBe(200)
  }
  return { invoiceId: invoice.id as string, optionId: option.id as string }
}

const request = (invoiceId: string, body: Record<string, unknown>) =>
  publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/refunds`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

const messageFor = async (invoiceId: string, paymentOptionId: string, refundAddress: string) => {
  const { body } = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/refunds`)
  return refundMessage({ domain: body.signatureDomain, invoiceId, paymentOptionId, refundAddress })
}

const merchantRefunds = async (invoiceId: string) => (await merchant.dashboard(`/api/dashboard/invoices/${invoiceId}/refunds`)).body.data as Array<RefundJson>

describe("refund requests side by side (issue #52)", () => {
  it("a second address stands beside the first while pending, up to 5, and the merchant sees who paid", async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const { invoiceId, optionId } = await overpaidBy("ethereum", payer.address)
    const first = await request(invoiceId, { paymentOptionId: optionId, refundAddress: payer.address })
    const second = await request(invoiceId, { paymentOptionId: optionId, refundAddress: OTHER_EVM })
    expect(first).toMatchObject({ status: 201, body: { status: "requested", verified: false, amount: "5" } })
    expect(second).toMatchObject({ status: 201, body: { status: "requested", verified: false, amount: "5" } })
    expect((await request(invoiceId, { paymentOptionId: optionId, refundAddress: OTHER_EVM })).status).toBe(200)

    const listed = await merchantRefunds(invoiceId)
    expect(listed.map((refund) => [refund.refundAddress.toLowerCase(), refund.paidFrom, refund.differsFromPayer, refund.verified])).toEqual([
      [payer.address.toLowerCase(), payer.address, false, false],
      [OTHER_EVM, payer.address, true, false]
    ])

    for (let more = 0; more < 3; more++) {
      const address = privateKeyToAccount(generatePrivateKey()).address
      expect((await request(invoiceId, { paymentOptionId: optionId, refundAddress: address })).status).toBe(201)
    }
    expect(await request(invoiceId, { paymentOptionId: optionId, refundAddress: THIRD_EVM })).toMatchObject({
      status: 409,
      body: { error: "5 refund requests are already pending for this payment option" }
    })
  })

  it("the overview counts the side-by-side requests of one payment once", async () => {
    const owner = merchant
    merchant = await app.createMerchant()
    try {
      const { invoiceId, optionId } = await overpaidBy("ethereum", THIRD_EVM)
      for (const address of [OTHER_EVM, THIRD_EVM]) expect((await request(invoiceId, { paymentOptionId: optionId, refundAddress: address })).status).toBe(201)
      expect((await merchant.dashboard("/api/dashboard/overview")).body.waitingRefunds).toBe(1)
    } finally {
      merchant = owner
    }
  })

  it("the merchant's choice rejects the others; then the option takes no new address", async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const { invoiceId, optionId } = await overpaidBy("ethereum", payer.address)
    const kept = await request(invoiceId, { paymentOptionId: optionId, refundAddress: payer.address })
    const other = await request(invoiceId, { paymentOptionId: optionId, refundAddress: OTHER_EVM })
    const chosen = await merchant.dashboard(`/api/dashboard/refunds/${kept.body.id}/choose`, { method: "POST" })
    expect(chosen).toMatchObject({ status: 200, body: { id: kept.body.id, status: "requested" } })
    expect(chosen.body.chosenAt).not.toBeNull()
    const { body } = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/refunds`)
    expect(body.refunds.find((refund: RefundJson) => refund.id === other.body.id)).toMatchObject({ status: "rejected", rejectionNote: "The merchant chose another refund request" })
    expect(body.refundable).toEqual([])
    expect(await request(invoiceId, { paymentOptionId: optionId, refundAddress: THIRD_EVM })).toMatchObject({
      status: 409,
      body: { error: "A refund was already requested for this payment option" }
    })
    expect(await merchant.dashboard(`/api/dashboard/refunds/${other.body.id}/choose`, { method: "POST" })).toMatchObject({
      status: 409,
      body: { error: "Only a requested refund can be chosen" }
    })
  })

  it("paying one of the pending requests is choosing it: the watchers' sighting rejects the others", async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const { invoiceId, optionId } = await overpaidBy("ethereum", payer.address)
    const paid = await request(invoiceId, { paymentOptionId: optionId, refundAddress: payer.address })
    const other = await request(invoiceId, { paymentOptionId: optionId, refundAddress: OTHER_EVM })
    const transfer = { refundId: RefundId.make(paid.body.id), transactionHash: txHash(), outputIndex: 0, blockHeight: 10n, blockHash: "0xbb", observedAt: new Date(),
      confirmations: 1 }
    await app.run(Effect.flatMap(RefundWatch, (watch) => watch.observe(transfer)))
    const listed = await merchantRefunds(invoiceId)
    expect(listed.map((refund) => [refund.id, refund.status, refund.rejectionNote])).toEqual([
      [paid.body.id, "sent", null],
      [other.body.id, "rejected", "The merchant chose another refund request"]
    ])
    expect(listed[0].chosenAt).not.toBeNull()
  })
})

describe("signed refund requests (issue #52)", () => {
  it("EVM: a request signed by the paying address is verified and replaces the unverified ones; a newer signed one replaces it", async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const { invoiceId, optionId } = await overpaidBy("ethereum", payer.address)
    const claim = await request(invoiceId, { paymentOptionId: optionId, refundAddress: OTHER_EVM })
    expect(claim.status).toBe(201)

    const signature = await payer.signMessage({ message: await messageFor(invoiceId, optionId, payer.address) })
    const signed = await request(invoiceId, { paymentOptionId: optionId, refundAddress: payer.address, signature })
    expect(signed).toMatchObject({ status: 201, body: { verified: true, refundAddress: payer.address, status: "requested" } })
    const { body } = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/refunds`)
    expect(body.refunds.find((refund: RefundJson) => refund.id === claim.body.id)).toMatchObject({
      status: "rejected",
      rejectionNote: "Replaced by a request signed by the paying address"
    })
    // Beside a verified request an unsigned one is refused.
    expect(await request(invoiceId, { paymentOptionId: optionId, refundAddress: THIRD_EVM })).toMatchObject({
      status: 409,
      body: { error: "A request signed by the paying address is pending for this payment option" }
    })
    // The same payer signing again, for another address of theirs: the newer replaces the first.
    const again = await request(invoiceId, {
      paymentOptionId: optionId,
      refundAddress: THIRD_EVM,
      signature: await payer.signMessage({ message: await messageFor(invoiceId, optionId, THIRD_EVM) })
    })
    expect(again).toMatchObject({ status: 201, body: { verified: true } })
    const states = (await merchantRefunds(invoiceId)).map((refund) => [refund.id, refund.status, refund.verified])
    expect(states).toEqual([[claim.body.id, "rejected", false], [signed.body.id, "rejected", true], [again.body.id, "requested", true]])
  })

  it("EVM: a signature by another address is not verified; a malformed one or a wrong signer is refused with 400", async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const stranger = privateKeyToAccount(generatePrivateKey())
    const { invoiceId, optionId } = await overpaidBy("ethereum", payer.address)
    const message = await messageFor(invoiceId, optionId, stranger.address)
    expect(await request(invoiceId, { paymentOptionId: optionId, refundAddress: stranger.address, signature: "0x1234" })).toMatchObject({
      status: 400,
      body: { error: "signature must be a 65-byte EIP-191 signature as 0x hex" }
    })
    const strangers = await stranger.signMessage({ message })
    expect(await request(invoiceId, { paymentOptionId: optionId, refundAddress: stranger.address, signature: strangers, signer: payer.address })).toMatchObject({
      status: 400,
      body: { error: "signature does not match the refund request and signer" }
    })
    const unverified = await request(invoiceId, { paymentOptionId: optionId, refundAddress: stranger.address, signature: strangers })
    expect(unverified).toMatchObject({ status: 201, body: { verified: false } })
    // Signed for another invoice: the payer's signature does not carry over.
    const elsewhere = await overpaidBy("ethereum", payer.address)
    const replayed = await payer.signMessage({ message: await messageFor(elsewhere.invoiceId, elsewhere.optionId, payer.address) })
    expect(await request(invoiceId, { paymentOptionId: optionId, refundAddress: payer.address, signature: replayed })).toMatchObject({
      status: 201,
      body: { verified: false }
    })
  })

  it("Solana: an ed25519 signature by the paying wallet is verified; a bad one is refused with 400", async () => {
    const secret = ed25519.utils.randomSecretKey()
    const payer = base58.encode(ed25519.getPublicKey(secret))
    const refundTo = base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()))
    const { invoiceId, optionId } = await overpaidBy("solana", payer)
    const message = new TextEncoder().encode(await messageFor(invoiceId, optionId, refundTo))
    const signature = base58.encode(ed25519.sign(message, secret))
    expect(await request(invoiceId, { paymentOptionId: optionId, refundAddress: refundTo, signature })).toMatchObject({
      status: 400,
      body: { error: "signer must be the Solana public key (base58) that signed" }
    })
    expect(await request(invoiceId, { paymentOptionId: optionId, refundAddress: refundTo, signature, signer: refundTo })).toMatchObject({
      status: 400,
      body: { error: "signature does not match the refund request and signer" }
    })
    const signed = await request(invoiceId, { paymentOptionId: optionId, refundAddress: refundTo, signature, signer: payer })
    expect(signed).toMatchObject({ status: 201, body: { verified: true, refundAddress: refundTo } })
    const [listed] = await merchantRefunds(invoiceId)
    expect(listed).toMatchObject({ paidFrom: payer, differsFromPayer: true, verified: true })
  })
})

describe("the OpenAPI document (issue #52)", () => {
  it("declares the signature fields, the verified and payer fields and the choose endpoint", async () => {
    const { body } = await publicRequest(app.baseUrl, "/api/openapi.json")
    const schemas = body.components.schemas
    expect(Object.keys(schemas.RequestRefund.properties)).toEqual(expect.arrayContaining(["signature", "signer"]))
    expect(schemas.PublicRefund.required).toContain("verified")
    expect(schemas.InvoiceRefunds.required).toContain("signatureDomain")
    expect(schemas.Refund.required).toEqual(expect.arrayContaining(["verified", "paidFrom", "differsFromPayer", "chosenAt"]))
    expect(Object.keys(body.paths["/api/dashboard/refunds/{id}/choose"].post.responses).sort()).toEqual(expect.arrayContaining(["200", "404", "409"]))
  })
})
