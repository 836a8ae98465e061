/**
 * The messages between the payment page in a frame and the shop's checkout.js (issue #57). The
 * script says `hello` to the frame once it has loaded; the page answers `ready` with its status to
 * the hello's origin (the browser names it; frame-ancestors has already allowed it), and `status`
 * at each change after. Anything not of this shape is ignored on both sides.
 */
export const MESSAGE_SOURCE = "checkout-invoicing"

export interface HelloMessage {
  readonly source: typeof MESSAGE_SOURCE
  readonly type: "hello"
}

export interface PageMessage {
  readonly source: typeof MESSAGE_SOURCE
  readonly type: "ready" | "status"
  readonly invoiceId: string
  readonly status: string
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

export const isHello = (value: unknown): value is HelloMessage => isRecord(value) && value.source === MESSAGE_SOURCE && value.type === "hello"

export const isPageMessage = (value: unknown): value is PageMessage =>
  isRecord(value) && value.source === MESSAGE_SOURCE && (value.type === "ready" || value.type === "status") &&
  typeof value.invoiceId === "string" && /^[0-9a-f-]{36}$/.test(value.invoiceId) &&
  typeof value.status === "string" && /^[a-z_]{1,40}$/.test(value.status)
