import { Context, Effect, Layer } from "effect"
import type { InvoiceId } from "../domain/Ids.ts"

/** Why what an invoice's confirmed payments leave over may have shrunk. */
export type CoverageLoss =
  /** Evidence was invalidated (a reorganisation, a dropped mempool transaction) or judged after one. */
  | "invalidation"
  /** The merchant closed the invoice's exception (accepting a late payment keeps the amount from it). */
  | "exception_closed"

/**
 * What other features do when what an invoice's confirmed payments leave over may have shrunk:
 * called by PaymentEvidence and Invoices inside that change's transaction, under the invoice's row
 * lock, after the invoice was saved. The refunds reject the requested refunds no longer covered.
 * Declared here so that the invoices never import them.
 */
export class EvidenceFollowUp extends Context.Service<EvidenceFollowUp, {
  readonly afterCoverageLoss: (invoiceId: InvoiceId, cause: CoverageLoss) => Effect.Effect<void>
}>()("Invoices/EvidenceFollowUp") {
  /** Nothing follows (a process or test without refunds). */
  static readonly none = Layer.succeed(EvidenceFollowUp, { afterCoverageLoss: () => Effect.void })
}
