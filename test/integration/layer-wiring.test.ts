import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { ApiKeyAdmission } from "../../src/accounts/ApiKeyAdmission.ts"
import { RateLimits } from "../../src/accounts/RateLimits.ts"
import { Sessions } from "../../src/accounts/Sessions.ts"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { InvoiceExpiry } from "../../src/expiry/InvoiceExpiry.ts"
import { ForwarderSweeper } from "../../src/chains/evm/ForwarderSweeper.ts"
import { SolanaPrepare } from "../../src/chains/solana/SolanaPrepare.ts"
import type { AppConfig } from "../../src/config/AppConfig.ts"
import { InvoiceChanges } from "../../src/invoices/InvoiceChanges.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { StatusStream } from "../../src/invoices/StatusStream.ts"
import type { EvidenceFollowUp } from "../../src/invoices/EvidenceFollowUp.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import { OptionPlanner } from "../../src/payments/OptionPlanner.ts"
import { Refunds } from "../../src/refunds/Refunds.ts"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { WebhookSettings } from "../../src/webhooks/WebhookSettings.ts"
import { ServicesLive } from "../../src/Services.ts"
import { newInvoice, SuiteAccount, testServices } from "../support/TestLayers.ts"

// Issue #54 item 1: each service layer brings its own dependencies; what is left to the root is
// the configuration, the database client and the ports a lower floor declares for a higher one.
type Edges = AppConfig | SqlClient.SqlClient | EvidenceFollowUp

describe("layers that bring their own dependencies", () => {
  it("need nothing but the configuration, the database and the ports (checked by the compiler)", () => {
    const layers: ReadonlyArray<Layer.Layer<never, unknown, Edges>> = [
      Accounts.layer,
      ApiKeyAdmission.layer,
      RateLimits.layer,
      Sessions.layer,
      ChainWatchers.layer,
      ChainWatchers.worker,
      InvoiceExpiry.layer,
      InvoiceExpiry.worker,
      ForwarderSweeper.layer,
      ForwarderSweeper.worker,
      SolanaPrepare.layer,
      Invoices.layer,
      PaymentEvidence.layer,
      StatusStream.layer,
      CheckoutSettingsRepo.layer,
      OptionPlanner.layer,
      Refunds.layer,
      WebhookDispatcher.layer,
      WebhookDispatcher.worker,
      WebhookSettings.layer
    ]
    expect(layers.every(Layer.isLayer)).toBe(true)
    const services: Layer.Layer<never, unknown, AppConfig> = ServicesLive
    expect(Layer.isLayer(services)).toBe(true)
  })
})

describe("shared services are one instance", () => {
  it.layer(SuiteAccount.layer().pipe(Layer.provideMerge(testServices())), { timeout: "120 seconds" })((it) => {
    it.effect("the invoice bus the application holds is the one the invoices' repository publishes on", () =>
      Effect.gen(function*() {
        const bus = yield* InvoiceChanges
        const { merchantId } = yield* SuiteAccount
        const { invoice } = yield* newInvoice(merchantId, { amountUsd: 5 })
        const before = bus.published()
        // A status change is a save of the invoice: the publishing repository announces it on its bus.
        yield* Effect.orDie(Effect.flatMap(Invoices, (invoices) => invoices.void(merchantId, invoice.id)))
        expect(bus.published()).toBe(before + 1)
      }))

    it.effect("evidence's repository publishes on that bus too (the invoice repositories are split by reader, #54)", () =>
      Effect.gen(function*() {
        const bus = yield* InvoiceChanges
        const { merchantId } = yield* SuiteAccount
        const { options } = yield* newInvoice(merchantId, { amountUsd: 5 })
        const before = bus.published()
        yield* Effect.orDie(Effect.flatMap(PaymentEvidence, (evidence) =>
          evidence.record({
            paymentOptionId: options.find((option) => option.network === "ethereum")!.id,
            amountAtomic: 1_000_000n,
            transactionHash: `0x${"ab".repeat(32)}`,
            outputIndex: 0,
            confirmations: 0,
            observedAt: new Date()
          })))
        expect(bus.published()).toBe(before + 1)
      }))
  })
})
