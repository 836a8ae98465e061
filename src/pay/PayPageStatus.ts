import { owedMicros } from "../domain/Coverage.ts"
import type { InvoiceParts, PaymentOptionRecord } from "../domain/Invoice.ts"
import { formatAtomic } from "../domain/Money.ts"
import { usualConfirmationMinutes } from "./ConfirmationTime.ts"
import { type Explorers, transactionUrl } from "./Explorers.ts"
import { type Html, html, joined } from "./Html.ts"
import { assetOnNetwork, counted, networkName, timeOf, usd } from "./PayPageText.ts"
import { fill, type Strings } from "./Strings.ts"

// The payer page's status section: what it says about the invoice now, the payments seen, the receipt.

const shortHash = (hash: string) => (hash.length > 20 ? `${hash.slice(0, 10)}…${hash.slice(-8)}` : hash)

/**
 * A transaction hash linked to the network's public explorer (plain text without one). The link's
 * name starts with the hash it shows (a name that differs from the visible text confuses speech
 * input); where it leads follows, for screen readers only.
 */
const transactionLink = (t: Strings, explorers: Explorers, network: string, hash: string) => {
  const url = transactionUrl(explorers, network, hash)
  const text = html`<code class="tx-hash">${shortHash(hash)}</code>`
  return url === undefined ?
    text :
    html`<a class="tx-link" href="${url}" target="_blank" rel="noopener noreferrer" title="${hash}">${text}<span class="visually-hidden"> (${
      fill(t.viewTransaction, { network: networkName(t, network) })
    })</span></a>`
}

/** The payments seen so far: amount, network, explorer link and confirmations against the option's requirement. */
export const transactionList = (parts: InvoiceParts, t: Strings, explorers: Explorers) => {
  const payments = counted(parts)
  if (payments.length === 0) return []
  const lines: Array<Html> = [html`<h2 class="transactions-title">${t.yourPayments}</h2>`, html`<ul class="transactions">`]
  for (const payment of payments) {
    const required = parts.options.find((option) => option.id === payment.paymentOptionId)?.requiredConfirmations ?? 1
    const shown = Math.min(payment.confirmations, required)
    const confirmations = payment.confirmedAt !== null
      ? html`<span class="tx-confirmations tx-confirmed">✓ ${t.confirmedTransaction}</span>`
      : html`<span class="tx-confirmations"><span class="tx-count">${shown}</span> / <span class="tx-required">${required}</span> ${t.confirmations}</span> <progress max="${required}" value="${shown}"></progress>`
    lines.push(
      html`<li class="transaction" data-network="${payment.network}"><span class="tx-amount">${formatAtomic(payment.amountAtomic, payment.decimals)} ${
        assetOnNetwork(t, payment.assetCode, payment.network)
      }</span> ${payment.transactionHash === null ? "" : transactionLink(t, explorers, payment.network, payment.transactionHash)} ${confirmations}</li>`
    )
  }
  lines.push(html`</ul>`)
  return lines
}

/** The payments as the receipt lists them: each amount on its network, each transaction linked to its explorer. */
const paymentLines = (parts: InvoiceParts, t: Strings, explorers: Explorers) => {
  const payments = counted(parts)
  return {
    amounts: payments.map((payment) => html`${formatAtomic(payment.amountAtomic, payment.decimals)} ${assetOnNetwork(t, payment.assetCode, payment.network)}`),
    hashes: payments.flatMap((payment) => payment.transactionHash === null ? [] : [transactionLink(t, explorers, payment.network, payment.transactionHash)])
  }
}

/** What was paid (USD and per payment), when, by which transactions, for which invoice. */
const receiptList = (parts: InvoiceParts, t: Strings, explorers: Explorers, at: { readonly label: string; readonly date: Date | null }) => {
  const { invoice } = parts
  const { amounts, hashes } = paymentLines(parts, t, explorers)
  const paidMicros = invoice.receivedMicros > 0n ? invoice.receivedMicros : invoice.amountMicros
  const lines: Array<Html> = [
    html`<h2 class="receipt-title">${t.receipt}</h2>`,
    html`<dl class="receipt">`,
    html`<dt>${t.amountPaid}</dt><dd class="receipt-amount"><strong>${usd(t, paidMicros)}</strong>${amounts.length > 0 ? html`<br>${joined(amounts, "<br>")}` : ""}</dd>`
  ]
  if (at.date !== null) lines.push(html`<dt>${at.label}</dt><dd class="receipt-time">${timeOf(t, at.date)}</dd>`)
  lines.push(html`<dt>${t.transaction}</dt><dd class="receipt-tx">${hashes.length > 0 ? joined(hashes, "<br>") : t.recordedBySeller}</dd>`)
  lines.push(html`<dt>${t.invoice}</dt><dd class="receipt-invoice"><code>${invoice.id}</code></dd>`, html`</dl>`)
  return lines
}

const receipt = (parts: InvoiceParts, t: Strings, explorers: Explorers, status: "confirmed" | "paid_out_of_band") => {
  const { invoice } = parts
  const paidAt = (status === "confirmed" ? invoice.confirmedAt : invoice.paidOutOfBandAt) ?? invoice.confirmedAt ?? invoice.paidOutOfBandAt
  return receiptList(parts, t, explorers, { label: t.paidAt, date: paidAt })
}

/**
 * A payment that came after the deadline (or a partial one the deadline cut short): the payer is
 * told first that it arrived, with its receipt, then where it stands (the seller reviews it, or
 * closed the invoice unpaid and a refund can be asked for here) and what follows.
 */
const latePayment = (parts: InvoiceParts, t: Strings, explorers: Explorers) => {
  const { invoice } = parts
  const closedUnpaid = invoice.exceptionStatus === "closed" && invoice.exceptionAction === "close_unpaid"
  const lead = invoice.exceptionType === "partial_payment" ? t.late.partialReceived : t.late.received
  const lines = [html`<p class="late-lead">${lead}</p>`]
  if (closedUnpaid) lines.push(html`<p class="late-next">${t.late.closedUnpaid}</p>`)
  else lines.push(html`<p class="late-next">${t.late.review}</p>`, html`<p class="hint">${t.late.noMore}</p>`)
  const receivedAt = invoice.lastPaymentObservedAt ?? counted(parts).at(-1)?.observedAt ?? null
  lines.push(...receiptList(parts, t, explorers, { label: t.late.receivedAt, date: receivedAt }))
  return lines
}

/** Whether the payer sent something to an invoice that can no longer be paid: they are owed an account of it. */
const paidButClosed = (parts: InvoiceParts, status: string) => (status === "expired" || status === "voided") && (parts.invoice.receivedMicros > 0n || counted(parts).length > 0)

/** The status section's lines: what the page says about the invoice now. */
export const statusLines = (parts: InvoiceParts, t: Strings, explorers: Explorers, status: string, paid: PaymentOptionRecord | undefined) => {
  const { invoice } = parts
  if (paidButClosed(parts, status)) return latePayment(parts, t, explorers)
  switch (status) {
    case "awaiting_payment":
      return [html`<p>${t.awaiting}</p>`]
    case "partially_paid": {
      const remaining = owedMicros(invoice.amountMicros, invoice.receivedMicros)
      return [
        html`<p>${t.partiallyPaid}</p>`,
        html`<p class="progress">${t.received} <strong class="received">${usd(t, invoice.receivedMicros)}</strong> · ${t.remaining} <strong class="remaining">${
          usd(t, remaining)
        }</strong></p>`
      ]
    }
    case "payment_detected":
      return detectedLines(parts, t, explorers, paid)
    case "confirmed":
    case "paid_out_of_band":
      return paidLines(parts, t, explorers, status)
    case "expired":
      return [html`<p class="warning">${t.expired}</p>`]
    default:
      return [html`<p class="warning">${t.voided}</p>`]
  }
}

/** A payment seen, its confirmations counted: the paid option's network's count, not the largest of all options. */
const detectedLines = (parts: InvoiceParts, t: Strings, explorers: Explorers, paid: PaymentOptionRecord | undefined) => {
  const required = Math.max(paid?.requiredConfirmations ?? 1, 1)
  const shown = Math.min(parts.invoice.confirmations, required)
  const network = networkName(t, paid?.network ?? counted(parts).at(-1)?.network ?? "")
  return [
    html`<p class="detected">${
      fill(t.detected, { network })
    } (<span class="confirmations">${shown}</span> / <span class="required-confirmations">${required}</span> ${t.confirmations})</p>`,
    html`<progress class="confirmation-progress" max="${required}" value="${shown}" aria-label="${t.confirmations}"></progress>`,
    html`<p class="detected-wait">${fill(t.detectedWait, { minutes: String(usualConfirmationMinutes(paid?.network ?? "", required)) })}</p>`,
    ...transactionList(parts, t, explorers)
  ]
}

const paidLines = (parts: InvoiceParts, t: Strings, explorers: Explorers, status: "confirmed" | "paid_out_of_band") => {
  const { invoice } = parts
  const lines = [html`<p class="success">${status === "confirmed" ? t.confirmed : t.paidOutOfBand}</p>`, ...receipt(parts, t, explorers, status)]
  if (invoice.redirectUrl !== null) {
    lines.push(html`<p><a class="button primary return" href="${invoice.redirectUrl}">${t.returnToShop}</a></p>`)
    lines.push(html`<p class="hint">${t.returningSoon}</p>`)
  }
  return lines
}
