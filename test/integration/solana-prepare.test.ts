import { ASSOCIATED_TOKEN_PROGRAM_ID, decodeTransferCheckedInstruction, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from "@solana/spl-token"
import { Keypair, PublicKey, Transaction } from "@solana/web3.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MEMO_PROGRAM_ID } from "../../src/chains/solana/SolanaTransfer.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { type SolanaNode, startSolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { JsonBody } from "../support/Json.ts"

const USDC = Keypair.generate().publicKey
const LIMIT = 2

let node: SolanaNode
let app: TestApp
let limited: TestApp
const databases: Array<Awaited<ReturnType<typeof privateDatabase>>> = []

const start = async (overrides: Parameters<typeof startTestApp>[0]) => {
  const database = await privateDatabase()
  databases.push(database)
  return startTestApp(overrides, {
    ...(database.url === undefined ? {} : { DATABASE_URL: database.url }),
    CHECKOUT_RPC_URL_SOLANA: node.url,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_TOKEN_SOLANA_USDC: USDC.toBase58()
  })
}

const newMerchant = (target: TestApp, recipient = Keypair.generate().publicKey) =>
  target.createMerchant({
    methods: [
      { network: "solana", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: recipient.toBase58(), xpub: null },
      { network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }
    ]
  })

const createInvoice = async (merchant: TestMerchant, amountUsd: number) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  expect(created.status).toBe(201)
  const options = created.body.paymentOptions as ReadonlyArray<JsonBody>
  return {
    id: created.body.id as string,
    solana: options.find((option) => option.network === "solana"),
    ethereum: options.find((option) => option.network === "ethereum")
  }
}

const prepare = (target: TestApp, invoiceId: string, body: unknown, headers: Record<string, string> = {}) =>
  publicRequest(target.baseUrl, `/api/checkout/pay/${invoiceId}/prepare-solana-wallet-payment`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

beforeAll(async () => {
  node = await startSolanaNode()
  node.installMint(USDC, 6, Keypair.generate().publicKey)
  app = await start({ solanaPrepareRateLimitPerMinute: 1_000_000 })
  limited = await start({ solanaPrepareRateLimitPerMinute: LIMIT, rateLimitStoreTimeoutMs: 30_000 })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await limited?.close()
  await node?.close()
  for (const database of databases) await database.drop()
})

describe("POST /api/checkout/pay/:id/prepare-solana-wallet-payment", () => {
  it("answers an unsigned transaction paid by the payer: idempotent ATA creation, memo, transferChecked with the reference", async () => {
    const recipient = Keypair.generate().publicKey
    const merchant = await newMerchant(app, recipient)
    const invoice = await createInvoice(merchant, 3.25)
    const payer = Keypair.generate().publicKey
    const answer = await prepare(app, invoice.id, { paymentOptionId: invoice.solana.id, payerPublicKey: payer.toBase58() })
    expect(answer.status).toBe(200)
    expect(Object.keys(answer.body).sort()).toEqual(["amountAtomic", "blockhash", "lastValidBlockHeight", "paymentOptionId", "transaction"])
    expect(answer.body).toMatchObject({ paymentOptionId: invoice.solana.id, amountAtomic: "3250000", blockhash: node.svm.latestBlockhash() })

    const transaction = Transaction.from(Buffer.from(answer.body.transaction, "base64"))
    expect(transaction.feePayer?.equals(payer)).toBe(true)
    expect(transaction.recentBlockhash).toBe(answer.body.blockhash)
    // Unsigned, and the payer is the only signer it asks for.
    expect(transaction.signatures.map((entry) => [entry.publicKey.toBase58(), entry.signature])).toEqual([[payer.toBase58(), null]])
    const message = transaction.compileMessage()
    expect(message.header.numRequiredSignatures).toBe(1)

    const [create, memo, transfer] = transaction.instructions
    expect(transaction.instructions).toHaveLength(3)
    const recipientAccount = getAssociatedTokenAddressSync(USDC, recipient)
    expect(create.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)).toBe(true)
    expect([...create.data]).toEqual([1]) // CreateIdempotent
    expect(create.keys[1].pubkey.equals(recipientAccount)).toBe(true)
    expect(create.keys[2].pubkey.equals(recipient)).toBe(true)
    expect(memo.programId.equals(MEMO_PROGRAM_ID)).toBe(true)
    expect(memo.keys).toEqual([])
    expect(memo.data.toString("utf8")).toBe(invoice.solana.optionPayload.memo)
    expect(transfer.programId.equals(TOKEN_PROGRAM_ID)).toBe(true)
    const decoded = decodeTransferCheckedInstruction(transfer)
    expect(decoded.data).toMatchObject({ amount: 3_250_000n, decimals: 6 })
    expect(decoded.keys.source.pubkey.equals(getAssociatedTokenAddressSync(USDC, payer))).toBe(true)
    expect(decoded.keys.destination.pubkey.equals(recipientAccount)).toBe(true)
    expect(decoded.keys.mint.pubkey.equals(USDC)).toBe(true)
    const reference = transfer.keys[transfer.keys.length - 1]
    expect(reference).toEqual({ pubkey: new PublicKey(invoice.solana.optionPayload.reference), isSigner: false, isWritable: false })
  })

  it("answers 400 for an invalid payer key or option id, 404 for an unknown invoice, each with its message", async () => {
    const merchant = await newMerchant(app)
    const invoice = await createInvoice(merchant, 5)
    const payer = Keypair.generate().publicKey.toBase58()
    const cases: Array<[unknown, string]> = [
      [{ paymentOptionId: invoice.solana.id, payerPublicKey: "not-a-key" }, "payerPublicKey must be a base58 Solana public key (32 bytes on the ed25519 curve)"],
      // An address off the curve (a token account) cannot sign a transaction.
      [{ paymentOptionId: invoice.solana.id, payerPublicKey: getAssociatedTokenAddressSync(USDC, new PublicKey(payer)).toBase58() },
        "payerPublicKey must be a base58 Solana public key (32 bytes on the ed25519 curve)"],
      [{ paymentOptionId: "option-1", payerPublicKey: payer }, "paymentOptionId must be a valid UUID"],
      [{ payerPublicKey: payer }, "paymentOptionId is required"],
      [{ paymentOptionId: invoice.solana.id, payerPublicKey: payer, amount: 1 }, "amount is not a known field"]
    ]
    for (const [body, error] of cases) {
      const answer = await prepare(app, invoice.id, body)
      expect({ body, status: answer.status, answer: answer.body }).toEqual({ body, status: 400, answer: { error } })
    }
    const unknown = await prepare(app, crypto.randomUUID(), { paymentOptionId: invoice.solana.id, payerPublicKey: payer })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ error: "Invoice not found" })
  })

  it("answers 409 when the option is not a Solana option of the invoice or the invoice is not payable", async () => {
    const merchant = await newMerchant(app)
    const invoice = await createInvoice(merchant, 5)
    const other = await createInvoice(merchant, 5)
    const payerPublicKey = Keypair.generate().publicKey.toBase58()
    for (const optionId of [invoice.ethereum.id, other.solana.id, crypto.randomUUID()]) {
      const answer = await prepare(app, invoice.id, { paymentOptionId: optionId, payerPublicKey })
      expect(answer.status).toBe(409)
      expect(answer.body).toEqual({ error: `Payment option ${optionId} is not a Solana option of this invoice` })
    }
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { method: "POST", body: {} })).status).toBe(200)
    const voided = await prepare(app, invoice.id, { paymentOptionId: invoice.solana.id, payerPublicKey })
    expect(voided.status).toBe(409)
    expect(voided.body).toEqual({ error: "This invoice cannot be paid: it is voided" })
  })

  it("answers 429 over the per-IP preparation limit, with Retry-After", async () => {
    const merchant = await newMerchant(limited)
    const invoice = await createInvoice(merchant, 5)
    const body = { paymentOptionId: invoice.solana.id, payerPublicKey: Keypair.generate().publicKey.toBase58() }
    for (let attempt = 0; attempt < LIMIT; attempt++) expect((await prepare(limited, invoice.id, body)).status).toBe(200)
    const over = await prepare(limited, invoice.id, body)
    expect(over.status).toBe(429)
    expect(over.body.error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/)
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("allows any origin without credentials on the public endpoints (preflight included), and not on merchant ones", async () => {
    const merchant = await newMerchant(app)
    const invoice = await createInvoice(merchant, 5)
    const origin = { origin: "https://shop.example" }
    const preflight = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/prepare-solana-wallet-payment`, {
      method: "OPTIONS",
      headers: { ...origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" }
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*")
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST")
    expect(preflight.headers.get("access-control-allow-headers")).toContain("content-type")
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull()

    for (const path of [`/api/checkout/pay/${invoice.id}`, `/api/checkout/pay/${invoice.id}/status`]) {
      const answer = await publicRequest(app.baseUrl, path, { headers: origin })
      expect(answer.status).toBe(200)
      expect(answer.headers.get("access-control-allow-origin")).toBe("*")
      expect(answer.headers.get("access-control-allow-credentials")).toBeNull()
    }
    const prepared = await prepare(app, invoice.id, { paymentOptionId: invoice.solana.id, payerPublicKey: Keypair.generate().publicKey.toBase58() }, origin)
    expect(prepared.status).toBe(200)
    expect(prepared.headers.get("access-control-allow-origin")).toBe("*")
    // An error answer carries it too, so that a browser can read the message.
    const refused = await prepare(app, invoice.id, { paymentOptionId: "x", payerPublicKey: "y" }, origin)
    expect(refused.status).toBe(400)
    expect(refused.headers.get("access-control-allow-origin")).toBe("*")

    const merchantAnswer = await merchant.api(`/api/checkout/invoices/${invoice.id}`, { headers: origin })
    expect(merchantAnswer.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("is in the OpenAPI document with its request, answer and errors", async () => {
    const { body } = await publicRequest(app.baseUrl, "/api/openapi.json")
    const operation = body.paths["/api/checkout/pay/{id}/prepare-solana-wallet-payment"]?.post
    expect(operation).toBeDefined()
    expect(Object.keys(operation.responses).sort()).toEqual(expect.arrayContaining(["200", "400", "404", "409", "429", "503"]))
    expect(JSON.stringify(body.components.schemas.SolanaWalletPayment)).toContain("lastValidBlockHeight")
    expect(JSON.stringify(body.components.schemas.PrepareSolanaWalletPayment)).toContain("payerPublicKey")
  })
})
