import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ForwarderSweepRepo } from "../../src/chains/evm/ForwarderSweepRepo.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { inPrivateDatabase, newInvoice, SuiteAccount, testServices } from "../support/TestLayers.ts"

// Issue #55: a test invoice paid through the helpers or the payer page's simulation has no funds in
// its forwarder: the live forwarder sweeper must never spend the relayer's gas on it.
const suite = SuiteAccount.layer({
  methods: [{ network: "ethereum", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: true, recipientAddress: DEMO_KEYS.evmRecipient, xpub: null }]
}).pipe(Layer.provideMerge(inPrivateDatabase((url) => testServices({}, url === undefined ? {} : { DATABASE_URL: url }))))

const paidInvoice = (mode: "live" | "test") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { invoice, options } = yield* newInvoice((yield* SuiteAccount).merchantId, { amountUsd: 3 })
    if (mode === "test") yield* sql`UPDATE invoices SET livemode = false WHERE id = ${invoice.id}`
    const option = options[0]!
    yield* (yield* PaymentEvidence).record({
      paymentOptionId: option.id,
      transactionHash: `sim_${crypto.randomUUID().replaceAll("-", "")}`,
      outputIndex: 0,
      amountAtomic: option.quotedAtomic,
      confirmations: option.requiredConfirmations,
      observedAt: new Date(yield* Clock.currentTimeMillis)
    })
    return option.id as string
  })

it.layer(suite, suiteOptions)((it) => {
  describe("forwarder sweeps and test invoices", () => {
    it.effect("a confirmed payment of a live invoice's forwarder is due for a sweep; a test invoice's never is", () =>
      Effect.gen(function*() {
        const live = yield* paidInvoice("live")
        const test = yield* paidInvoice("test")
        const due = yield* (yield* ForwarderSweepRepo).due("ethereum", new Date(Date.now() + 86_400_000))
        const options = due.map((payment) => payment.optionId)
        expect(options).toContain(live)
        expect(options).not.toContain(test)
      }))
  })
})
