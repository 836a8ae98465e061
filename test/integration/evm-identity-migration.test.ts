import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type ObservedPayment, PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { SuiteMerchant, suiteOptions, testApp } from "../support/TestApp.ts"
import type { OptionJson, PaymentJson } from "../support/Answers.ts"

// EVM evidence was identified by the block-level log index before migration 0015, and is by the
// log's position within its transaction since. A row stored before (marked by the migration) and
// the same transfer observed again under its new identity must not count twice.
// The whole app: what counts is read where the merchant reads it, in the API's invoice view.

const api = (path: string, init?: { body?: unknown }) => Effect.flatMap(SuiteMerchant, (merchant) => merchant.api(path, init))

const newUsdcOption = (amountUsd: number) =>
  Effect.gen(function*() {
    const { body } = yield* api("/api/checkout/invoices", { body: { amountUsd } })
    return { invoiceId: String(body.id), optionId: String(body.paymentOptions.find((option: OptionJson) => option.network === "ethereum").id) }
  })

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

const record = (payment: ObservedPayment) => Effect.flatMap(PaymentEvidence, (evidence) => Effect.result(evidence.record(payment)))
const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => Effect.flatMap(SqlClient.SqlClient, run)

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("EVM evidence stored under its block-level log index", () => {
    it.effect("is not counted again when the same transfer is observed under its position within the transaction", () =>
      Effect.gen(function*() {
        const { invoiceId, optionId } = yield* newUsdcOption(10)
        const hash = txHash()
        const transfer = { paymentOptionId: optionId, transactionHash: hash, amountAtomic: 4_000_000n, confirmations: 1, observedAt: new Date(), blockHeight: 100n,
          blockHash: "0xb1" }
        expect((yield* record({ ...transfer, outputIndex: 7 }))._tag).toBe("Success")
        // As migration 0015 marks the rows it finds.
        yield* sql((sql) => sql`UPDATE payments SET block_log_index = true WHERE transaction_hash = ${hash}`)

        // A replay of the block after the upgrade: the same transfer, now at position 0.
        const replayed = yield* record({ ...transfer, outputIndex: 0 })
        expect(replayed._tag).toBe("Failure")
        const rows = yield* sql((sql) => sql<{ outputIndex: number }>`SELECT output_index FROM payments WHERE invoice_id = ${invoiceId}`)
        expect(rows.map((row) => row.outputIndex)).toEqual([7])
        expect((yield* api(`/api/checkout/invoices/${invoiceId}`)).body.receivedAmountUsd).toBe(4)

        // Another transfer of the same transaction (another amount) is another payment.
        expect((yield* record({ ...transfer, outputIndex: 1, amountAtomic: 1_000_000n }))._tag).toBe("Success")
        expect((yield* api(`/api/checkout/invoices/${invoiceId}`)).body.receivedAmountUsd).toBe(5)
      }))

    it.effect("gives way to the new identity once a reorganisation invalidated it", () =>
      Effect.gen(function*() {
        const { invoiceId, optionId } = yield* newUsdcOption(10)
        const hash = txHash()
        const transfer = { paymentOptionId: optionId, transactionHash: hash, amountAtomic: 10_000_000n, confirmations: 1, observedAt: new Date(), blockHeight: 100n,
          blockHash: "0xb1" }
        expect((yield* record({ ...transfer, outputIndex: 3 }))._tag).toBe("Success")
        yield* sql((sql) => sql`UPDATE payments SET block_log_index = true WHERE transaction_hash = ${hash}`)
        yield* Effect.flatMap(PaymentEvidence,
          (evidence) => evidence.invalidate({ network: "ethereum", transactionHash: hash, outputIndex: 3, reason: "chain_reorganization", reorgPoint: 99n }))

        expect((yield* record({ ...transfer, outputIndex: 0, blockHeight: 101n, blockHash: "0xb2" }))._tag).toBe("Success")
        const body = (yield* api(`/api/checkout/invoices/${invoiceId}`)).body
        expect(body.receivedAmountUsd).toBe(10)
        expect((body.payments as ReadonlyArray<PaymentJson>).filter((payment) => payment.invalidatedAt === null)).toHaveLength(1)
      }))
  })
})
