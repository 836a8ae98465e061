import { Context, Effect, Layer } from "effect"
import type { InvoiceId } from "../domain/Ids.ts"

/**
 * What other features do when an invoice's evidence was invalidated (a reorganisation, a dropped
 * mempool transaction) or judged after one: called by PaymentEvidence inside that transaction,
 * under the invoice's row lock, after the invoice was saved. The refunds reject the requested
 * refunds that the evidence no longer covers. Declared here so that the invoices never import them.
 */
export class EvidenceFollowUp extends Context.Service<EvidenceFollowUp, {
  readonly afterInvalidation: (invoiceId: InvoiceId) => Effect.Effect<void>
}>()("Invoices/EvidenceFollowUp") {
  /** Nothing follows (a process or test without refunds). */
  static readonly none = Layer.succeed(EvidenceFollowUp, { afterInvalidation: () => Effect.void })
}
