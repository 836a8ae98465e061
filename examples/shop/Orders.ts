import { randomUUID } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import type { Product } from "./Catalog.ts"

export type OrderStatus = "awaiting_payment" | "paid" | "cancelled"

/** The event of a receipt that no webhook brought: the shop's catch-up read at start. */
export const CATCH_UP_EVENT = "catch_up"

/**
 * A webhook the shop verified and acted on: its event, its delivery id, and the invoice status the
 * shop then fetched (or the catch-up at start: event `catch_up`, no delivery).
 */
export interface WebhookReceipt {
  readonly event: string
  readonly delivery: string | null
  readonly invoiceStatus: string
  readonly receivedAt: string
}

export interface Order {
  readonly id: string
  readonly productName: string
  readonly amountUsd: number
  readonly createdAt: string
  readonly status: OrderStatus
  readonly invoiceId: string | null
  readonly paymentUrl: string | null
  readonly paidAt: string | null
  /** The webhook after which the shop saw the invoice paid: the only way an order becomes paid here. */
  readonly paidThrough: WebhookReceipt | null
  readonly webhooks: ReadonlyArray<WebhookReceipt>
}

/**
 * The order status an invoice status means (the service's advice: fulfil on `confirmed` or
 * `paid_out_of_band`, keep `payment_detected` and `partially_paid` pending, stop on `expired` and
 * `voided`). Paid stays paid: webhooks arrive in any order, and a late one must not undo it.
 */
export const orderStatusAfter = (current: OrderStatus, invoiceStatus: string): OrderStatus => {
  if (current === "paid") return "paid"
  if (invoiceStatus === "confirmed" || invoiceStatus === "paid_out_of_band") return "paid"
  if (invoiceStatus === "expired" || invoiceStatus === "voided") return "cancelled"
  return "awaiting_payment"
}

/** The order after one verified webhook and the invoice fetched because of it. */
export const withWebhook = (order: Order, receipt: WebhookReceipt): Order => {
  const status = orderStatusAfter(order.status, receipt.invoiceStatus)
  const becamePaid = status === "paid" && order.status !== "paid"
  return {
    ...order,
    status,
    paidAt: becamePaid ? receipt.receivedAt : order.paidAt,
    paidThrough: becamePaid ? receipt : order.paidThrough,
    webhooks: [...order.webhooks, receipt]
  }
}

export interface OrderStore {
  readonly create: (product: Product) => Order
  readonly get: (id: string) => Order | undefined
  readonly byInvoice: (invoiceId: string) => Order | undefined
  /** Orders with an invoice that are not paid yet: what the catch-up at start reads again. */
  readonly unsettled: () => ReadonlyArray<Order & { readonly invoiceId: string }>
  readonly attachInvoice: (id: string, invoice: { readonly id: string; readonly paymentUrl: string }) => Order
  readonly recordWebhook: (id: string, receipt: WebhookReceipt) => Order
}

/** Orders in memory, written to `file` after every change when one is given (and read from it at start). */
export const orderStore = (file?: string): OrderStore => {
  const orders = new Map<string, Order>()
  if (file !== undefined && existsSync(file)) {
    for (const order of JSON.parse(readFileSync(file, "utf8")) as Array<Order>) orders.set(order.id, order)
  }
  const save = (order: Order) => {
    orders.set(order.id, order)
    if (file !== undefined) writeFileSync(file, JSON.stringify([...orders.values()], null, 2))
    return order
  }
  const existing = (id: string) => {
    const order = orders.get(id)
    if (order === undefined) throw new Error(`no order ${id}`)
    return order
  }
  return {
    create: (product) =>
      save({
        id: `order-${randomUUID()}`,
        productName: product.name,
        amountUsd: product.priceUsd,
        createdAt: new Date().toISOString(),
        status: "awaiting_payment",
        invoiceId: null,
        paymentUrl: null,
        paidAt: null,
        paidThrough: null,
        webhooks: []
      }),
    get: (id) => orders.get(id),
    byInvoice: (invoiceId) => [...orders.values()].find((order) => order.invoiceId === invoiceId),
    unsettled: () => [...orders.values()].filter((order): order is Order & { invoiceId: string } => order.invoiceId !== null && order.status !== "paid"),
    attachInvoice: (id, invoice) => save({ ...existing(id), invoiceId: invoice.id, paymentUrl: invoice.paymentUrl }),
    recordWebhook: (id, receipt) => save(withWebhook(existing(id), receipt))
  }
}
