/** One invoice: its facts, actions, payments, quotes, refunds, unmatched deposits, timeline, path and deliveries. */

import { CLOSE_ACTION_WORDS, eventWords } from "../Words.ts"
import type { CloseAction, Invoice, InvoiceDetail, Payment, UnmatchedDeposits } from "./Api.ts"
import { exceptionText, closeExceptionForm } from "./InvoicesView.ts"
import { invoicePath } from "./LifecycleView.ts"
import { paymentPageLink, transactionLink } from "./Links.ts"
import { invoiceRefunds } from "./Refunds.ts"
import { api, cardTable, h, notice, show, statusBadge, submitting, Superseded, usd, when } from "./Ui.ts"
import { deliveryTable } from "./WebhooksView.ts"

const BASIS_WORDS = { sources: "median of sources", par: "1:1 (par)", fixed: "fixed demo rate" } as const

/** What each asset's rate rested on: the price sources used (with their prices), their spread, those left out and why. */
const quotesSection = (quotes: InvoiceDetail["quotes"]) => {
  if (quotes.length === 0) return null
  const sourcesText = (quote: InvoiceDetail["quotes"][number]) => quote.sources.map((source) => `${source.source} ${source.priceUsd}`).join(", ") || "—"
  const leftOutText = (quote: InvoiceDetail["quotes"][number]) => quote.leftOut.map((source) => `${source.source} (${source.reason})`).join(", ") || "—"
  const rows = quotes.map((quote) =>
    h("tr", { "data-asset": quote.assetCode }, h("td", {}, quote.assetCode), h("td", { class: "number" }, quote.rateUsd), h("td", {}, BASIS_WORDS[quote.basis]),
      h("td", { class: "number" }, quote.sources.length > 1 ? quote.spread : "—"), h("td", {}, sourcesText(quote)), h("td", {}, leftOutText(quote)))
  )
  return h("section", { "data-section": "quotes" }, h("h2", {}, "Quotes"), cardTable(["Asset", "Rate (USD)", "Basis", "Spread", "Sources used", "Left out"], rows))
}

/** Which of two offered actions settles a late payment: the chain's money is taken by closing the exception. */
const LATE_PAYMENT_HINT = () =>
  h("p", { class: "hint", "data-hint": "late-payment" }, "The payment reached the chain after the invoice expired: take it with Close exception → ",
    `“${CLOSE_ACTION_WORDS.accept_late_payment}”. Use Record payment only for money received outside the service (a bank transfer, cash).`)

/** What the merchant can do to the invoice now: void, record a payment made elsewhere, close its exception. */
const invoiceActions = (invoice: Invoice, closeActions: ReadonlyArray<CloseAction>, reload: () => void) => {
  const actions: Array<Node> = []
  if (invoice.status === "awaiting_payment") {
    actions.push(h("button", { type: "button", onclick: async () => {
      if (!confirm("Void this invoice?")) return
      const failure = await api("POST", `/api/checkout/invoices/${invoice.id}/void`, {}).then(() => undefined, (error: Error) => error)
      if (failure instanceof Superseded) return
      if (failure !== undefined) alert(failure.message)
      reload()
    } }, "Void"))
  }
  if (["awaiting_payment", "partially_paid", "expired"].includes(invoice.status)) {
    const form = h("form", { class: "inline-form" },
      h("label", {}, "Paid outside the service: note", h("input", { name: "note", required: true, maxlength: "2000", "data-field": "note" })),
      h("button", { type: "submit" }, "Record payment")) as HTMLFormElement
    form.addEventListener("submit", submitting(form, async () => {
      await api("POST", `/api/checkout/invoices/${invoice.id}/record-payment`, { note: new FormData(form).get("note") })
      reload()
    }))
    actions.push(form)
  }
  if (invoice.exceptionStatus === "open" && closeActions.length > 0) actions.push(closeExceptionForm(invoice, closeActions, reload))
  if (invoice.status === "expired" && invoice.exceptionStatus === "open" && closeActions.includes("accept_late_payment")) actions.unshift(LATE_PAYMENT_HINT())
  return actions.length === 0 ? null : h("section", { class: "actions" }, h("h2", {}, "Actions"), ...actions)
}

const invoiceFacts = (invoice: Invoice) =>
  h("dl", { class: "facts" }, ...([
    ["Invoice", invoice.id],
    ["Status", statusBadge(invoice.status)],
    ["Amount", usd(invoice.amountUsd)],
    ["Received", usd(invoice.receivedAmountUsd)],
    ["Confirmed", usd(invoice.confirmedAmountUsd)],
    ["Reference", invoice.merchantReference ?? "—"],
    ["Customer", invoice.customerEmail ?? "—"],
    ["Payable until", when(invoice.paymentTiming.payableUntilAt)],
    ["Payment page", paymentPageLink(invoice.paymentUrl)],
    ["Overpaid", invoice.paymentSummary.overpaymentAmountUsd > 0 ? usd(invoice.paymentSummary.overpaymentAmountUsd) : "—"],
    ["Exception", `${exceptionText(invoice)}${invoice.exceptionNote ? `: ${invoice.exceptionNote}` : ""}`],
    ["Paid outside the service", invoice.paidOutOfBandAt === null ? "—" : `${when(invoice.paidOutOfBandAt)}: ${invoice.paidOutOfBandNote ?? ""}`]
  ] as const).flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]))

const paymentsSection = (payments: ReadonlyArray<Payment>) =>
  payments.length === 0 ?
    h("p", {}, "No payment yet.") :
    cardTable(["Observed", "Network", "Amount", "Confirmations", "Transaction"], payments.map((payment) =>
      h("tr", { class: payment.invalidatedAt === null ? "" : "invalidated" }, h("td", {}, when(payment.observedAt)), h("td", {}, `${payment.network} ${payment.assetCode}`),
        h("td", { class: "number" }, `${payment.amountReceived} ${payment.assetCode}`), h("td", { class: "number" }, String(payment.confirmations)),
        h("td", { class: "mono" }, payment.transactionHash === null ? "—" : transactionLink(payment.network, payment.transactionHash),
          payment.invalidatedAt === null ? "" : ` (removed: ${payment.invalidationReason ?? "reorganisation"})`))
    ))

const unmatchedSection = (unmatched: UnmatchedDeposits) =>
  unmatched.data.length === 0 ?
    null :
    h("section", {}, h("h2", {}, "Unmatched deposits (not counted)"),
      h("p", {}, "Transfers to this invoice's address that match none of its payment options, e.g. the wrong token or network."),
      cardTable(["Detected", "Network", "Token", "Amount (smallest unit)", "Reason", "Transaction"], unmatched.data.map((deposit) =>
        h("tr", {}, h("td", {}, when(deposit.detectedAt)), h("td", {}, deposit.network), h("td", { class: "mono" }, deposit.tokenContract ?? "—"),
          h("td", { class: "number" }, deposit.amountAtomic), h("td", {}, deposit.invalidatedAt === null ? deposit.reason : `${deposit.reason} (removed by a reorganisation)`),
          h("td", { class: "mono" }, transactionLink(deposit.network, deposit.transactionHash)))
      )))

/** The invoice's outbox events in words, oldest first (the API's name kept for the curious). */
const timelineList = (timeline: InvoiceDetail["timeline"]) =>
  h("ol", { class: "timeline" }, ...timeline.map((entry) =>
    h("li", { "data-event": entry.event }, h("time", { datetime: entry.at }, when(entry.at)), " ", eventWords(entry.event))
  ))

export const invoiceView = async (id: string, params: URLSearchParams) => {
  const [{ invoice, closeActions, timeline, deliveries, quotes }, unmatched, refunds] = await Promise.all([
    api<InvoiceDetail>("GET", `/api/dashboard/invoices/${id}`),
    api<UnmatchedDeposits>("GET", `/api/dashboard/invoices/${id}/unmatched-deposits`),
    // The invoice is shown even when its refunds cannot be read.
    invoiceRefunds(id, () => void invoiceView(id, new URLSearchParams())).catch((error: Error) => {
      if (error instanceof Superseded) throw error
      return h("section", { "data-section": "refunds" }, h("h2", {}, "Refunds"), notice(error.message))
    })
  ])
  const reload = () => void invoiceView(id, new URLSearchParams())
  show(
    h("p", {}, h("a", { href: "#/invoices" }, "← Invoices")),
    h("h1", {}, invoice.productName ?? "Invoice"),
    params.has("created") ? notice("Invoice created. Send the payment page to your customer.", "ok") : null,
    invoiceFacts(invoice),
    invoiceActions(invoice, closeActions, reload),
    h("h2", {}, "Payments"),
    paymentsSection(invoice.payments ?? []),
    quotesSection(quotes),
    refunds,
    unmatchedSection(unmatched),
    h("h2", {}, "Timeline"),
    timelineList(timeline),
    h("h2", {}, "Path through the lifecycle"),
    ...invoicePath(invoice, timeline),
    h("h2", {}, "Webhook deliveries"),
    deliveries.length === 0 ? h("p", {}, "None.") : deliveryTable(deliveries, reload)
  )
}
