import { Clock, Context, Effect, Layer, Option } from "effect"
import { InvalidRequest, InvoiceNotFound, NothingToRefund, PaymentOptionNotFound, RefundAlreadyRequested, RefundNotFound, RefundStatusConflict } from "../domain/Errors.ts"
import { type InvoiceId, RefundId } from "../domain/Ids.ts"
import type { PaymentOptionRecord } from "../domain/Invoice.ts"
import { type CoverageLoss, EvidenceFollowUp } from "../invoices/EvidenceFollowUp.ts"
import { type InvoiceParts, InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import { base58 } from "@scure/base"
import type { RefundRecord, RefundStatus } from "./Refund.ts"
import { RailSettings } from "../payments/RailSettings.ts"
import { ContractCode } from "./ContractCode.ts"
import {
  burnAddressRefusal,
  CODE_NOT_CHECKED_NOTE,
  CONTRACT_ADDRESS_MESSAGE,
  DEPOSIT_ADDRESS_MESSAGE,
  invalidRefundAddressMessage,
  type RefundDestination,
  refundDestination,
  tokenContractRefusal
} from "./RefundAddress.ts"
import { type Refundable, refundsToReject, requestable } from "./Refundable.ts"
import { rejectedWith, rejectOtherCandidates } from "./RefundChoice.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { type RefundRequest, type Vouched, vouching } from "./RequestChecks.ts"
import { decideRequest } from "./RequestDecision.ts"
import { isEvmNetwork } from "./RefundMessage.ts"
import { RefundsRepo } from "./RefundsRepo.ts"
import { InvoiceChanges } from "../invoices/InvoiceChanges.ts"
import type { MerchantId } from "../domain/Ids.ts"

/** The notes of refunds rejected because what they were granted on no longer holds, by cause. */
export const AUTOMATIC_REJECTION_NOTES: Readonly<Record<CoverageLoss, string>> = {
  invalidation: "A payment it refunded was invalidated",
  exception_closed: "The merchant accepted the payment it refunded"
}

/** The most refunds one dashboard list answers. */
export const REFUND_LIST_LIMIT = 100

export type { RefundRequest } from "./RequestChecks.ts"

/** What can be refunded on one option now, with the option it is in. */
export interface RefundableOption extends Refundable {
  readonly option: PaymentOptionRecord
}

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

/** What the payer can ask for now (Refundable.ts `requestable`), with the option of each amount. */
export const refundableOptions = (parts: InvoiceParts, refunds: ReadonlyArray<RefundRecord>): ReadonlyArray<RefundableOption> => {
  const options = new Map(parts.options.map((option) => [option.id as string, option]))
  return requestable(parts.invoice, parts.options, parts.payments, refunds).flatMap((entry) => {
    const option = options.get(entry.paymentOptionId)
    return option === undefined ? [] : [{ ...entry, option }]
  })
}

/** A new refund of what the option may still refund, to the payer's address. */
const newRefund = (parts: InvoiceParts, entry: RefundableOption, checked: CheckedAddress, vouched: Vouched, email: string | null, at: Date): RefundRecord => {
  const { address, watchKey } = checked.destination
  const { option } = entry
  // A fresh key that only this refund's transfer carries (Solana Pay's reference), as the options have.
  const reference = option.network === "solana" ? base58.encode(crypto.getRandomValues(new Uint8Array(32))) : null
  return {
    id: RefundId.make(crypto.randomUUID()),
    merchantId: parts.invoice.merchantId,
    invoiceId: parts.invoice.id,
    paymentOptionId: option.id,
    network: option.network,
    assetCode: option.assetCode,
    tokenContract: option.tokenContract,
    decimals: option.decimals,
    amountAtomic: entry.refundableAtomic,
    refundAddress: address,
    watchKey: reference ?? watchKey,
    reference,
    payerEmail: email,
    reason: entry.reason,
    status: "requested",
    requiredConfirmations: option.requiredConfirmations,
    transactionHash: null,
    outputIndex: null,
    blockHeight: null,
    blockHash: null,
    confirmations: 0,
    rejectionNote: null,
    addressNote: checked.note,
    verified: vouched.verified,
    paidFrom: vouched.paidFrom,
    chosenAt: null,
    requestedAt: at,
    sentAt: null,
    completedAt: null,
    rejectedAt: null,
    updatedAt: at
  }
}

/** A refund address that passed the checks, with what they could not establish. */
interface CheckedAddress {
  readonly destination: RefundDestination
  readonly note: string | null
}

/**
 * Refunds without custody (issue #40): the payer asks for what an invoice refunds on one option, to
 * an address of theirs; the merchant pays it from their own wallet (or rejects it with a note); the
 * chain watchers see the transfer (RefundWatchLive). Writes run in a transaction under the
 * invoice's row lock, which the evidence changes take too, so that a request and an invalidation
 * never both count the same money.
 */
export class Refunds extends Context.Service<Refunds, {
  /** The service's host: the first word of the refund message a payer signs (RefundMessage.ts). */
  readonly signatureDomain: string
  /** What the invoice refunds now and its refunds, for the payer page. */
  readonly forInvoice: (invoiceId: string) => Effect.Effect<{
    readonly refundable: ReadonlyArray<RefundableOption>
    readonly refunds: ReadonlyArray<RefundRecord>
  }, InvoiceNotFound>
  /**
   * The payer's request of everything refundable on one option (RequestDecision.ts: requests stand
   * side by side while pending; a signed one by the paying address replaces them); a repeat to the
   * same address answers the pending refund (`created` false).
   */
  readonly request: (invoiceId: string, request: RefundRequest) => Effect.Effect<
    { readonly refund: RefundRecord; readonly created: boolean },
    InvoiceNotFound | PaymentOptionNotFound | InvalidRequest | NothingToRefund | RefundAlreadyRequested | RefundStatusConflict
  >
  /** The refunds of the merchant's live invoices, or of its test ones (`livemode` false). */
  readonly list: (merchantId: MerchantId, livemode: boolean, status: RefundStatus | undefined) => Effect.Effect<ReadonlyArray<RefundRecord>>
  readonly listForInvoice: (merchantId: MerchantId, invoiceId: string) => Effect.Effect<ReadonlyArray<RefundRecord>, InvoiceNotFound>
  readonly get: (merchantId: MerchantId, refundId: string) => Effect.Effect<RefundRecord, RefundNotFound>
  /** The merchant picks one of an option's pending requests; the others are rejected (issue #52). Idempotent. */
  readonly choose: (merchantId: MerchantId, refundId: string) => Effect.Effect<RefundRecord, RefundNotFound | RefundStatusConflict>
  /** The merchant declines a requested refund, with a note for the payer; final. */
  readonly reject: (merchantId: MerchantId, refundId: string, note: string) => Effect.Effect<RefundRecord, RefundNotFound | RefundStatusConflict>
  /**
   * Within a transaction holding the invoice's row lock (an evidence change, an exception closed):
   * rejects the requested refunds its confirmed payments no longer cover, with their events. Idempotent.
   */
  readonly rejectUncovered: (invoiceId: string, cause: CoverageLoss) => Effect.Effect<void>
}>()("Refunds/Refunds") {
  static readonly layer = Layer.effect(
    Refunds,
    Effect.gen(function*() {
      const repo = yield* RefundsRepo
      const invoices = yield* InvoiceRepo
      const contractCode = yield* ContractCode
      const rails = yield* RailSettings
      const signatureDomain = new URL((yield* AppConfig).publicUrl).host
      // The deployment's token contracts and mints, and its forwarder factories: never a payer's wallet.
      const deploymentContracts = [...Object.values(rails.tokens), ...Object.values(rails.forwarder.factories)]
      const vouchedBy = vouching(repo, signatureDomain)

      const partsOf = (invoiceId: string) =>
        Effect.flatMap(invoices.find(invoiceId), Option.match({ onNone: () => Effect.fail(new InvoiceNotFound({ invoiceId })), onSome: Effect.succeed }))

      const forInvoice = Effect.fn("Refunds.forInvoice")(function*(invoiceId: string) {
        const parts = yield* partsOf(invoiceId)
        const refunds = yield* repo.listByInvoice(invoiceId)
        return { refundable: refundableOptions(parts, refunds), refunds }
      })

      const checkedAddress = addressChecks(repo, contractCode, deploymentContracts)

      const optionOf = (parts: InvoiceParts, paymentOptionId: string) => {
        const option = parts.options.find((candidate) => candidate.id === paymentOptionId)
        return option === undefined ? Effect.fail(new PaymentOptionNotFound({ paymentOptionId })) : Effect.succeed(option)
      }

      const request = Effect.fn("Refunds.request")(function*(invoiceId: string, body: RefundRequest) {
        // The address and signature are checked first, outside the transaction: the code check asks the network.
        const checkedOption = yield* optionOf(yield* partsOf(invoiceId), body.paymentOptionId)
        const checked = yield* checkedAddress(checkedOption, body.refundAddress)
        const address = checked.destination.address
        const vouched = yield* vouchedBy(invoiceId, checkedOption, address, body)
        return yield* repo.withTransaction(Effect.gen(function*() {
          // The invoice's row lock orders this request with evidence changes and other requests.
          if (Option.isNone(yield* invoices.lockForUpdate(invoiceId))) return yield* new InvoiceNotFound({ invoiceId })
          const parts = yield* partsOf(invoiceId)
          const option = yield* optionOf(parts, body.paymentOptionId)
          const decision = decideRequest(yield* repo.listByOption(invoiceId, option.id), address, vouched.verified)
          if (decision._tag === "Repeat") return { refund: decision.refund, created: false }
          if (decision._tag === "Refused") return yield* new RefundStatusConflict({ message: decision.message })
          const refunds = yield* repo.listByInvoice(invoiceId)
          const entry = refundableOptions(parts, refunds).find((candidate) => candidate.paymentOptionId === option.id)
          if (entry === undefined) {
            if (refunds.some((refund) => refund.paymentOptionId === option.id)) return yield* new RefundAlreadyRequested({ paymentOptionId: option.id })
            return yield* new NothingToRefund({ paymentOptionId: option.id })
          }
          const at = yield* now
          for (const { note, refund } of decision.replaces) yield* repo.update(rejectedWith(refund, note, at), "requested", "refund_rejected")
          const refund = newRefund(parts, entry, checked, vouched, body.email ?? null, at)
          yield* repo.insert(refund, "refund_requested")
          return { refund, created: true }
        }))
      })

      /** The merchant picks one of the option's pending requests: it is chosen, the others are rejected. */
      const choose = Effect.fn("Refunds.choose")(function*(merchantId: MerchantId, refundId: string) {
        return yield* repo.withTransaction(Effect.gen(function*() {
          const refund = yield* ownRefund(merchantId, refundId, repo.lock)
          if (refund.status !== "requested") return yield* new RefundStatusConflict({ message: "Only a requested refund can be chosen" })
          if (refund.chosenAt !== null) return refund
          const at = yield* now
          const chosen: RefundRecord = { ...refund, chosenAt: at, updatedAt: at }
          yield* repo.update(chosen, "requested", null)
          yield* rejectOtherCandidates(repo, chosen, at)
          return chosen
        }))
      })

      const reject = Effect.fn("Refunds.reject")(function*(merchantId: MerchantId, refundId: string, note: string) {
        return yield* repo.withTransaction(Effect.gen(function*() {
          const refund = yield* ownRefund(merchantId, refundId, repo.lock)
          if (refund.status !== "requested") return yield* new RefundStatusConflict({ message: "Only a requested refund can be rejected" })
          const rejected = rejectedWith(refund, note, yield* now)
          yield* repo.update(rejected, "requested", "refund_rejected")
          return rejected
        }))
      })

      const rejectUncovered = Effect.fn("Refunds.rejectUncovered")(function*(invoiceId: string, cause: CoverageLoss) {
        const refunds = yield* repo.listByInvoice(invoiceId)
        if (!refunds.some((refund) => refund.status === "requested")) return
        const parts = yield* Effect.orDie(partsOf(invoiceId))
        const at = yield* now
        for (const refund of refundsToReject(parts.invoice, parts.options, parts.payments, refunds)) {
          const rejected = rejectedWith(refund, AUTOMATIC_REJECTION_NOTES[cause], at)
          if (yield* repo.update(rejected, "requested", "refund_rejected")) {
            yield* Effect.logInfo("Refund rejected: what it was granted on no longer holds").pipe(Effect.annotateLogs({ invoiceId, refundId: refund.id, cause }))
          }
        }
      })

      return {
        signatureDomain,
        forInvoice,
        request,
        list: (merchantId, livemode, status) => repo.listByMerchant(merchantId, livemode, status ?? null, REFUND_LIST_LIMIT),
        listForInvoice: (merchantId, invoiceId) =>
          Effect.flatMap(invoices.find(invoiceId), (parts) =>
            Option.isNone(parts) || parts.value.invoice.merchantId !== merchantId
              ? Effect.fail(new InvoiceNotFound({ invoiceId }))
              : repo.listByInvoice(invoiceId)),
        get: (merchantId, refundId) => ownRefund(merchantId, refundId, repo.find),
        choose,
        reject,
        rejectUncovered
      }
    })
  ).pipe(Layer.provide([InvoiceChanges.publishingRepo, RefundsRepo.layer, RailSettings.layer, ContractCode.layer]))

  /** The refunds' answer to a coverage loss (PaymentEvidence and Invoices call it in that change's transaction). */
  static readonly followUp = Layer.effect(
    EvidenceFollowUp,
    Effect.map(Refunds, (refunds) => ({ afterCoverageLoss: (invoiceId: InvoiceId, cause: CoverageLoss) => refunds.rejectUncovered(invoiceId, cause) }))
  ).pipe(Layer.provide(Refunds.layer))
}

/**
 * The payer's address where a refund can arrive and stay theirs (issue #44): a valid address
 * of the network, not a burn or system address, a token contract, a deposit address the
 * service issued (a refund paid there would also look like a payment) nor, on EVM, a contract.
 * When no endpoint can tell whether it has code, the refund records that it was not checked.
 */
const addressChecks =
  (repo: RefundsRepo["Service"], contractCode: ContractCode["Service"], deploymentContracts: ReadonlyArray<string>) => (option: PaymentOptionRecord, text: string) =>
    Effect.gen(function*() {
      const { network } = option
      const destination = refundDestination(network, text)
      if (destination === undefined) return yield* new InvalidRequest({ message: invalidRefundAddressMessage(network) })
      const refusal = burnAddressRefusal(network, destination) ?? tokenContractRefusal(network, destination, deploymentContracts)
      if (refusal !== undefined) return yield* new InvalidRequest({ message: refusal })
      const evm = isEvmNetwork(network)
      if (yield* repo.isDepositAddress(destination.address, evm)) return yield* new InvalidRequest({ message: DEPOSIT_ADDRESS_MESSAGE })
      if (!evm) return { destination, note: null }
      const hasCode = yield* contractCode.hasCode(network, destination.address)
      if (hasCode === true) return yield* new InvalidRequest({ message: CONTRACT_ADDRESS_MESSAGE })
      return { destination, note: hasCode === undefined ? CODE_NOT_CHECKED_NOTE : null }
    })

/** The merchant's own refund, else RefundNotFound (another merchant's refund is not found either). */
const ownRefund = (merchantId: MerchantId, refundId: string, read: (id: string) => Effect.Effect<Option.Option<RefundRecord>>) =>
  Effect.flatMap(read(refundId), (found) =>
    Option.isSome(found) && found.value.merchantId === merchantId ? Effect.succeed(found.value) : Effect.fail(new RefundNotFound({ refundId })))
