/**
 * What the payer page shows of its invoice's status, as one string: the server writes it on the
 * page (data-fingerprint) and the script compares it with each pushed or polled status, so that
 * any change the page would draw differently (a payment's confirmations included) redraws it, and
 * nothing else does. Structural, so that it reads the server's view and the wire's JSON alike.
 */
export const pageFingerprint = (view: {
  readonly status: string
  readonly receivedAmountUsd: number
  readonly confirmations: number
  readonly payments: ReadonlyArray<{ readonly id: string; readonly confirmations: number; readonly confirmedAt: unknown; readonly invalidatedAt: unknown }>
}) =>
  [
    view.status,
    view.receivedAmountUsd,
    view.confirmations,
    ...view.payments.map((payment) => `${payment.id}:${payment.confirmations}:${payment.confirmedAt === null ? "" : "c"}${payment.invalidatedAt === null ? "" : "x"}`)
  ].join("|")
