import { Clock, Context, Effect, Layer, Option } from "effect"
import { BillingGate } from "../accounts/BillingGate.ts"
import {
  BillingBlocked,
  BitcoinAddressesPreparing,
  CheckoutConfigurationNotFound,
  IncompatibleTiming,
  InvoiceNotFound,
  InvoiceTransitionRejected,
  PaymentBackendUnavailable,
  PaymentMethodUnavailable
} from "../domain/Errors.ts"
import { leastConfirmedPayment } from "../domain/Evidence.ts"
import { type InvoiceParts, type InvoiceRecord, newInvoice } from "../domain/Invoice.ts"
import { applyDecision, type DecisionContext } from "../lifecycle/ApplyDecision.ts"
import { InvoiceId, MerchantId } from "../domain/Ids.ts"
import { centsToMicros } from "../domain/Money.ts"
import type { ExceptionCloseAction } from "../domain/Statuses.ts"
import type { InvoiceEvent } from "../lifecycle/InvoiceMachine.ts"
import { decide, initialDecision } from "../lifecycle/Lifecycle.ts"
import { lifecycleStateOf } from "../lifecycle/Settlement.ts"
import { type OptionPlan, OptionPlanner } from "../payments/OptionPlanner.ts"
import { EvidenceFollowUp } from "./EvidenceFollowUp.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"
import { timingFromOverride, type TimingOverrideInput } from "../domain/TimingOverride.ts"
import { InvoiceChanges } from "./InvoiceChanges.ts"

export interface Merchant {
  readonly merchantId: MerchantId
  readonly billingStatus: "active" | "blocked"
  /** false: a test key's request, which creates a test invoice (default true). */
  readonly livemode?: boolean | undefined
}

/** The invoice's fields a merchant may set at creation, typed by the entity. */
type MerchantSupplied = "productName" | "issuedBy" | "billTo" | "redirectUrl" | "merchantReference" | "customerId" | "customerEmail" | "metadata"

/**
 * What a merchant asks for when creating an invoice (the merchant API's request decodes into it,
 * and its schema checks `amountUsd`'s cents and `paymentTiming`'s fields before anything is read).
 */
export type InvoiceDraft = { readonly [K in MerchantSupplied]?: InvoiceRecord[K] | undefined } & {
  readonly amountUsd: number
  readonly paymentTiming?: TimingOverrideInput | null | undefined
}

/** The new invoice's record: the merchant's fields as drafted, the rest from the plan. */
const draftedInvoice = (merchant: Merchant, draft: InvoiceDraft, plan: OptionPlan, id: InvoiceId, createdAt: Date): InvoiceRecord =>
  newInvoice({
    id,
    merchantId: MerchantId.make(merchant.merchantId),
    amountMicros: centsToMicros(draft.amountUsd),
    status: initialDecision().state.status,
    timing: plan.timing,
    productName: draft.productName ?? null,
    issuedBy: plan.issuedBy,
    billTo: draft.billTo ?? null,
    redirectUrl: draft.redirectUrl ?? null,
    merchantReference: draft.merchantReference ?? null,
    customerId: draft.customerId ?? null,
    customerEmail: draft.customerEmail ?? null,
    metadata: draft.metadata ?? null,
    defaultPaymentOptionId: plan.options.find((option) => option.isDefault)?.id ?? null,
    createdAt,
    livemode: merchant.livemode ?? true
  })

/** Why `accept_late_payment` must wait: a payment below its option's confirmations (`confirmed` means confirmed funds). */
const unconfirmedPayment = (parts: InvoiceParts) => {
  const required = new Map<string, number>(parts.options.map((option) => [option.id, option.requiredConfirmations]))
  return leastConfirmedPayment(parts.payments, (optionId) => required.get(optionId) ?? 0)
}

/** Whether the invoice belongs to the merchant (when one is named) and to the mode (when one is named). */
const visibleTo = (invoice: InvoiceRecord, merchantId: MerchantId | undefined, livemode: boolean | undefined) =>
  (merchantId === undefined || invoice.merchantId === merchantId) && (livemode === undefined || invoice.livemode === livemode)

export class Invoices extends Context.Service<Invoices, {
  readonly create: (merchant: Merchant, body: InvoiceDraft) => Effect.Effect<
    InvoiceParts,
    | BillingBlocked
    | CheckoutConfigurationNotFound
    | IncompatibleTiming
    | PaymentMethodUnavailable
    | PaymentBackendUnavailable
    | BitcoinAddressesPreparing
  >
  /**
   * The merchant's invoice; with `livemode`, only an invoice of that mode (a live key gets 404 for a
   * test invoice and a test key for a live one); without it, either mode (the dashboard).
   */
  readonly get: (merchantId: MerchantId, id: string, livemode?: boolean) => Effect.Effect<InvoiceParts, InvoiceNotFound>
  readonly getPublic: (id: string) => Effect.Effect<InvoiceParts, InvoiceNotFound>
  readonly void: (merchantId: MerchantId, id: string, livemode?: boolean) => Effect.Effect<InvoiceParts, InvoiceNotFound | InvoiceTransitionRejected>
  readonly recordPayment: (merchantId: MerchantId, id: string, note: string, livemode?: boolean) => Effect.Effect<
    InvoiceParts,
    InvoiceNotFound | InvoiceTransitionRejected
  >
  readonly closeException: (merchantId: MerchantId, id: string, action: ExceptionCloseAction,
    note: string) => Effect.Effect<InvoiceParts, InvoiceNotFound | InvoiceTransitionRejected>
}>()("Invoices/Invoices") {
  static readonly layerWithoutDependencies = Layer.effect(
    Invoices,
    Effect.gen(function*() {
      const repo = yield* InvoiceRepo
      const followUp = yield* EvidenceFollowUp
      const planner = yield* OptionPlanner
      const billing = yield* BillingGate
      const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))

      const find = (merchantId: MerchantId | undefined, id: string, livemode?: boolean) =>
        repo.find(id).pipe(
          Effect.flatMap((parts) =>
            Option.isSome(parts) && visibleTo(parts.value.invoice, merchantId, livemode)
              ? Effect.succeed(parts.value)
              : Effect.fail(new InvoiceNotFound({ invoiceId: id }))
          )
        )

      /** Applies a merchant's event under the invoice's row lock; answers with the invoice as written. */
      const transition = Effect.fn("Invoices.transition")(function*(
        id: string,
        event: InvoiceEvent,
        options: {
          readonly merchantId?: MerchantId | undefined
          readonly livemode?: boolean | undefined
          readonly operation: InvoiceTransitionRejected["operation"]
          readonly note?: string | undefined
        }
      ) {
        return yield* repo.withTransaction(Effect.gen(function*() {
          const locked = yield* repo.lockParts(id)
          if (Option.isNone(locked) || !visibleTo(locked.value.invoice, options.merchantId, options.livemode)) {
            return yield* new InvoiceNotFound({ invoiceId: id })
          }
          const parts = locked.value
          const { invoice } = parts
          const decision = decide(lifecycleStateOf(invoice), event)
          if (decision === undefined) {
            return yield* new InvoiceTransitionRejected({ invoiceId: id, operation: options.operation, status: invoice.status })
          }
          if (event.type === "CLOSE_EXCEPTION" && event.action === "accept_late_payment") {
            // `confirmed` must mean confirmed funds: the payments were read under the lock, so no evidence changes in between.
            const short = unconfirmedPayment(parts)
            if (short !== undefined) {
              return yield* new InvoiceTransitionRejected({
                invoiceId: id,
                operation: options.operation,
                status: invoice.status,
                detail: `The late payment has ${short.confirmations} of ${short.required} confirmations; accept it once it is confirmed`
              })
            }
          }
          const context: DecisionContext = {
            now: yield* now,
            note: options.note,
            closeAction: event.type === "CLOSE_EXCEPTION" ? event.action : undefined
          }
          const applied = applyDecision(invoice, decision, context)
          yield* repo.save(applied.invoice, applied.events)
          if (event.type === "CLOSE_EXCEPTION") yield* followUp.afterCoverageLoss(applied.invoice.id, "exception_closed")
          return { ...parts, invoice: applied.invoice }
        }))
      })

      const create = Effect.fn("Invoices.create")(function*(merchant: Merchant, draft: InvoiceDraft) {
        if (!(yield* billing.allowsInvoiceCreation(merchant))) return yield* new BillingBlocked()
        const id = InvoiceId.make(crypto.randomUUID())
        const createdAt = yield* now
        const plan = yield* planner.plan({
          merchantId: merchant.merchantId,
          invoiceId: id,
          amountMicros: centsToMicros(draft.amountUsd),
          createdAt,
          timing: draft.paymentTiming === undefined || draft.paymentTiming === null ? undefined : timingFromOverride(draft.paymentTiming),
          issuedBy: draft.issuedBy,
          // The one place creation knows the invoice's mode: the planner reads that mode's checkout settings.
          livemode: merchant.livemode ?? true
        })
        const invoice = draftedInvoice(merchant, draft, plan, id, createdAt)
        const { events } = applyDecision(invoice, initialDecision(), { now: createdAt })
        yield* repo.insert(invoice, plan.options, events, plan.quotes)
        return { invoice, options: plan.options, payments: [] }
      })

      return {
        create,
        get: (merchantId, id, livemode) => find(merchantId, id, livemode),
        getPublic: (id) => find(undefined, id),
        void: (merchantId, id, livemode) => transition(id, { type: "VOID" }, { merchantId, livemode, operation: "void" }),
        recordPayment: (merchantId, id, note, livemode) => transition(id, { type: "RECORD_PAYMENT" }, { merchantId, livemode, operation: "record-payment", note }),
        // Closing may start a follow-up (coverage lost) that changes the invoice again: answer with it as it is now.
        closeException: Effect.fn("Invoices.closeException")(function*(merchantId: MerchantId, id: string, action: ExceptionCloseAction, note: string) {
          yield* transition(id, { type: "CLOSE_EXCEPTION", action }, { merchantId, operation: "close-exception", note })
          return yield* find(merchantId, id)
        })
      }
    })
  )

  /** With the invoice repository (publishing on the bus), the option planner and the billing gate; the evidence follow-up comes from the refunds above. */
  static readonly layer = Invoices.layerWithoutDependencies.pipe(Layer.provide([InvoiceChanges.publishingRepo, OptionPlanner.layer, BillingGate.accountState]))
}
