import { Effect } from "effect"
import { InvalidRequest } from "../domain/Errors.ts"
import type { PaymentOptionRecord } from "../domain/Invoice.ts"
import { refundMessage, sameAddress } from "./RefundMessage.ts"
import type { RefundsRepo } from "./RefundsRepo.ts"
import { type RefundSignature, signerOf } from "./RefundSigning.ts"

export interface RefundRequest extends Partial<RefundSignature> {
  readonly paymentOptionId: string
  readonly refundAddress: string
  readonly email?: string | undefined
}

/** Whether a request was signed by an address that paid the option, and who paid. */
export interface Vouched {
  readonly verified: boolean
  readonly paidFrom: string | null
}

/**
 * Who vouches for a refund request (issue #52), checked before its transaction: who paid the option
 * and, when the request is signed, whether the signer is one of them. `signatureDomain` is the host
 * the signed message names (RefundMessage.ts).
 */
export const vouching = (repo: RefundsRepo["Service"], signatureDomain: string) => {
  /** A signature, when given, must be valid (400 otherwise); it verifies the request when its signer paid the option. */
  const vouchedBy = (invoiceId: string, option: PaymentOptionRecord, address: string, body: RefundRequest): Effect.Effect<Vouched, InvalidRequest> =>
    Effect.gen(function*() {
      const payers = yield* repo.payersOf(option.id)
      const paidFrom = payers[0] ?? null
      if (body.signature === undefined) return { verified: false, paidFrom }
      const message = refundMessage({ domain: signatureDomain, invoiceId, paymentOptionId: option.id, refundAddress: address })
      const check = yield* signerOf(option.network, message, { signature: body.signature, signer: body.signer })
      if ("refused" in check) return yield* new InvalidRequest({ message: check.refused })
      return { verified: payers.some((payer) => sameAddress(option.network, payer, check.signer)), paidFrom }
    })

  return vouchedBy
}
