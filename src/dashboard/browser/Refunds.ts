/**
 * Refunds in the dashboard (issue #40): the Refunds view (every refund asked for, filtered by
 * status) and an invoice's refunds in its detail. The service holds no funds: "Pay refund" shows
 * the payment request the merchant's own wallet pays (QR code, URI, amount, recipient; for Solana
 * an unsigned transaction to sign), and the watchers complete the refund when they see it paid.
 * "Reject" asks for the note the payer is shown. Requests of one option stand side by side while
 * pending (issue #52): each shows its address beside the address that paid, flagged when they
 * differ, and whether the paying wallet signed it; "Choose" keeps one and rejects the others.
 */

import type { PreparedRefundTransaction, PrepareRefundBody, Refund, RefundList, RejectRefundBody } from "./Api.ts"
import { transactionLink } from "./Links.ts"
import { inMode } from "./Mode.ts"
import { api, type ApiError, cardTable, copyButton, h, notice, select, show, submitting, Superseded, when } from "./Ui.ts"

const STATUS_WORDS = { requested: "Requested", sent: "Sent", completed: "Completed", rejected: "Rejected" } as const satisfies Record<Refund["status"], string>
const REASON_WORDS = { overpayment: "Overpayment", close_unpaid: "Closed unpaid" } as const satisfies Record<Refund["reason"], string>
const STATUSES = Object.keys(STATUS_WORDS) as ReadonlyArray<Refund["status"]>

const networkName = (network: string) => network.charAt(0).toUpperCase() + network.slice(1)
const amountOf = (refund: Refund) => `${refund.amount} ${refund.assetCode} on ${networkName(refund.network)}`
const badge = (status: Refund["status"]) => h("span", { class: `status refund-${status}`, "data-status": status }, STATUS_WORDS[status])

/** The QR code's SVG (the service's own markup), parsed as SVG rather than set as HTML. */
const qrFigure = (svg: string, label: string) => {
  const figure = h("figure", { class: "qr", "aria-label": label })
  const parsed = new DOMParser().parseFromString(svg, "image/svg+xml").documentElement
  if (parsed.nodeName.toLowerCase() === "svg") figure.append(document.importNode(parsed, true))
  return figure
}

const fact = (term: string, value: string | Node, copy?: string) => [h("dt", {}, term), h("dd", {}, value, copy === undefined ? null : copyButton(copy))]

/** A Solana refund: the unsigned transfer from the merchant's wallet, prepared by the service, to sign and send there. */
const solanaForm = (refund: Refund) => {
  const result = h("div", { class: "prepared", "aria-live": "polite" })
  const form = h("form", { class: "inline-form" },
    h("label", {}, "Your wallet's public key (it pays the refund and the fee)",
      h("input", { name: "payerPublicKey", required: true, autocomplete: "off", spellcheck: "false", "data-field": "payerPublicKey" })),
    h("button", { type: "submit" }, "Prepare transaction")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const body: PrepareRefundBody = { payerPublicKey: String(new FormData(form).get("payerPublicKey") ?? "").trim() }
    const prepared = await api<PreparedRefundTransaction>("POST", `/api/dashboard/refunds/${refund.id}/prepare-solana-transaction`, body)
    result.replaceChildren(
      h("label", {}, "Unsigned transaction (base64): sign and send it with that wallet",
        h("textarea", { class: "mono transaction", readonly: true, rows: "6", spellcheck: "false" }, prepared.transaction)),
      copyButton(prepared.transaction),
      h("p", {}, `Valid until block height ${prepared.lastValidBlockHeight}; prepare it again after that.`)
    )
  }))
  return h("div", {}, form, result)
}

/** What the merchant's wallet pays: the payment request of the exact amount to the payer's refund address. */
const payPanel = (refund: Refund) => {
  const request = refund.paymentRequest
  return h("section", { class: "card refund-pay", "data-refund": refund.id, "aria-labelledby": `pay-${refund.id}` },
    h("h2", { id: `pay-${refund.id}`, tabindex: "-1" }, `Pay refund: ${amountOf(refund)}`),
    h("p", {}, "Send exactly this amount from your own wallet to the payer's refund address. The refund is sent once the transfer is seen on the chain, ",
      `and completed at ${refund.requiredConfirmations} confirmation${refund.requiredConfirmations === 1 ? "" : "s"}.`),
    qrFigure(request.qrCode, "Scan with your wallet to pay the refund"),
    h("dl", { class: "facts" }, ...fact("Amount", `${refund.amount} ${refund.assetCode} (${refund.amountAtomic} in smallest units)`, refund.amount),
      ...fact("Network", networkName(refund.network)), ...fact("Recipient", h("code", { class: "mono recipient" }, request.recipient), request.recipient),
      ...(request.tokenContract === null ? [] : fact("Token contract", h("code", { class: "mono" }, request.tokenContract), request.tokenContract)),
      ...(request.reference === null ? [] : fact("Reference", h("code", { class: "mono" }, request.reference), request.reference))),
    h("p", {}, h("a", { class: "button", href: request.uri }, "Open in wallet")), h("p", {}, h("code", { class: "mono payment-uri" }, request.uri), copyButton(request.uri)),
    refund.network === "solana" && refund.status === "requested" ? solanaForm(refund) : null)
}

const rejectPanel = (refund: Refund, after: () => void) => {
  const form = h("form", { class: "card refund-reject", "data-refund": refund.id, "aria-labelledby": `reject-${refund.id}` },
    h("h2", { id: `reject-${refund.id}`, tabindex: "-1" }, `Reject refund: ${amountOf(refund)}`),
    h("p", {}, "The payer sees your note on the payment page. A rejected refund cannot be asked for again."),
    h("label", {}, "Note to the payer (required)", h("textarea", { name: "note", required: true, maxlength: "500", rows: "3", "data-field": "note" })),
    h("button", { type: "submit" }, "Reject refund")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const body: RejectRefundBody = { note: String(new FormData(form).get("note") ?? "").trim() }
    await api<Refund>("POST", `/api/dashboard/refunds/${refund.id}/reject`, body)
    after()
  }))
  return form
}

/** Draws a panel below the list and takes the focus there. */
const open = (panel: HTMLElement, content: HTMLElement) => {
  panel.replaceChildren(content)
  content.querySelector<HTMLElement>("h2")?.focus()
}

/** The refund address beside the address that paid, flagged in words when they differ, and whether the payer signed the request. */
const addressCell = (refund: Refund) =>
  h("td", { class: "refund-addresses" }, h("code", { class: "mono requested-address" }, refund.refundAddress),
    h("span", { class: `verification ${refund.verified ? "verified" : "unverified"}` }, refund.verified ? "Signed by the paying address" : "Not signed"), refund.paidFrom === null
    ? h("span", { class: "paid-from" }, "Paid from: unknown")
    : h("span", { class: "paid-from" }, "Paid from: ", h("code", { class: "mono" }, refund.paidFrom)),
    refund.differsFromPayer ? h("strong", { class: "differs", "data-differs": "true" }, "⚠ Differs from the address that paid") : null)

/** A pending request the merchant has not chosen, beside others of its option. */
const isRival = (refund: Refund, refunds: ReadonlyArray<Refund>) =>
  refund.status === "requested" && refund.chosenAt === null &&
  refunds.some((other) => other.id !== refund.id && other.paymentOptionId === refund.paymentOptionId && other.status === "requested" && other.chosenAt === null)

/** Keeps this request; the service rejects the option's others. The view is drawn again either way (a failure shows what holds now). */
const choose = (refund: Refund, after: () => void) => () => void api<Refund>("POST", `/api/dashboard/refunds/${refund.id}/choose`).finally(after)

const transactionCell = (refund: Refund) =>
  refund.transactionHash === null
    ? refund.rejectionNote === null ? "—" : `Note: ${refund.rejectionNote}`
    : h("span", {}, transactionLink(refund.network, refund.transactionHash), ` (${refund.confirmations}/${refund.requiredConfirmations})`)

/** The refunds, with their actions; a panel (pay or reject) opens in `panel`. */
const refundTable = (refunds: ReadonlyArray<Refund>, panel: HTMLElement, after: () => void, withInvoice: boolean) => {
  const table = cardTable(["Amount", "Status", "Requested", ...(withInvoice ? ["Invoice"] : []), "Refund address", "Reason", "Transaction or note", ""],
    refunds.map((refund) =>
      h("tr", { "data-refund": refund.id, "data-status": refund.status }, h("td", { class: "title" }, amountOf(refund)), h("td", { class: "badge" }, badge(refund.status)),
        h("td", {}, when(refund.requestedAt)), withInvoice ? h("td", {}, h("a", { href: `#/invoices/${refund.invoiceId}` }, refund.invoiceId.slice(0, 8))) : null,
        addressCell(refund), h("td", {}, REASON_WORDS[refund.reason]), h("td", { class: "mono" }, transactionCell(refund)),
        h("td", { class: "row-actions" }, refund.status !== "requested" ? null : [
          isRival(refund, refunds) ? h("button", { type: "button", class: "choose", onclick: choose(refund, after) }, "Choose this request") : null,
          h("button", { type: "button", onclick: () => open(panel, payPanel(refund)) }, "Pay refund"),
          h("button", { type: "button", class: "secondary", onclick: () => open(panel, rejectPanel(refund, after)) }, "Reject")
        ]))
    ))
  table.classList.add("refund-table")
  return table
}

/** Reloads a view; an error after the merchant moved on is dropped, another is shown in place of the view. */
const reloading = (view: () => Promise<void>) => () =>
  void view().catch((error: unknown) => {
    if (error instanceof Superseded || (error as ApiError).status === 401) return
    show(h("h1", {}, "Something went wrong"), notice((error as Error).message))
  })

export const refundsView = async (params: URLSearchParams) => {
  const status = params.get("status") ?? ""
  const filters = h("form", { class: "filters", role: "search" }, select("status", "Status", STATUSES, status, "any", (value) => STATUS_WORDS[value as Refund["status"]]),
    h("button", { type: "submit" }, "Filter")) as HTMLFormElement
  filters.addEventListener("submit", (event) => {
    event.preventDefault()
    const chosen = String(new FormData(filters).get("status") ?? "")
    location.hash = chosen === "" ? "#/refunds" : `#/refunds?status=${encodeURIComponent(chosen)}`
  })
  const { data } = await api<RefundList>("GET", inMode(`/api/dashboard/refunds${status === "" ? "" : `?status=${encodeURIComponent(status)}`}`))
  const panel = h("div", { class: "refund-panel" })
  show(h("h1", {}, "Refunds"),
    h("p", {}, "Refunds payers asked for, newest first. The service holds no funds: you send each refund from your own wallet, ",
      "and it completes when the chain watchers see the transfer confirmed."), filters,
    data.length === 0 ? h("p", {}, "No refunds match.") : refundTable(data, panel, reloading(() => refundsView(params)), true), panel)
}

/** An invoice's refunds, for its detail page (`reload` draws the page again after an action). */
export const invoiceRefunds = async (invoiceId: string, reload: () => void) => {
  const panel = h("div", { class: "refund-panel" })
  const { data } = await api<RefundList>("GET", `/api/dashboard/invoices/${invoiceId}/refunds`)
  return h("section", { "data-section": "refunds" }, h("h2", {}, "Refunds"), data.length === 0 ? h("p", {}, "None requested.") : refundTable(data, panel, reload, false), panel)
}
