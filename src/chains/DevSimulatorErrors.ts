import { BadRequest, Conflict, NotFound } from "../http/ApiErrors.ts"

/** The development simulator's HTTP errors, each declared once with its status and message (DevSimulatorApi.ts lists their statuses). */
export const DevSimulatorErrors = {
  evidenceRejected: (error: { readonly reason: string }) => new Conflict({ error: `Evidence rejected: ${error.reason}` }),
  paymentNotFound: () => new NotFound({ error: "No payment of this invoice has that transactionHash" }),
  optionNotFound: () => new NotFound({ error: "paymentOptionId is not an option of this invoice" }),
  invalidAmount: (decimals: number) => new BadRequest({ error: `amount must be a positive amount with at most ${decimals} decimals` })
} as const
