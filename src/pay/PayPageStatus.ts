import { owedMicros } from "../domain/Coverage.ts"
import type { InvoiceParts, PaymentOptionRecord } from "../domain/Invoice.ts"
import { formatAtomic } from "../domain/Money.ts"
import { usualConfirmationMinutes } from "./ConfirmationTime.ts"
import { type Explorers, transactionUrl } from "./Explorers.ts"
import { assetOnNetwork, counted, escape, networkName, timeOf, usd } from "./PayPageText.ts"
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
  const text = `<code class="tx-hash">${escape(shortHash(hash))}</code>`
  return url === undefined ?
    text :
    `<a class="tx-link" href="${escape(url)}" target="_blank" rel="noopener noreferrer" title="${escape(hash)}">${text}<span class="visually-hidden"> (${
      escape(fill(t.viewTransaction, { network: networkName(t, network) }))
    })</span></a>`
}

/** The payments seen so far: amount, network, explorer link and confirmations against the option's requirement. */
export const transactionList = (parts: InvoiceParts, t: Strings, explorers: Explorers) => {
  const payments = counted(parts)
  if (payments.length === 0) return []
  const lines = [`<h2 class="transactions-title">${escape(t.yourPayments)}</h2>`, `<ul class="transactions">`]
  for (const payment of payments) {
    const required = parts.options.find((option) => option.id === payment.paymentOptionId)?.requiredConfirmations ?? 1
    const shown = Math.min(payment.confirmations, required)
    const confirmations = payment.confirmedAt !== null
      ? `<span class="tx-confirmations tx-confirmed">✓ ${escape(t.confirmedTransaction)}</span>`
      : `<span class="tx-confirmations"><span class="tx-count">${shown}</span> / <span class="tx-required">${required}</span> ${
        escape(t.confirmations)
      }</span> <progress max="${required}" value="${shown}"></progress>`
    lines.push(
      `<li class="transaction" data-network="${escape(payment.network)}"><span class="tx-amount">${escape(formatAtomic(payment.amountAtomic, payment.decimals))} ${
        assetOnNetwork(t, payment.assetCode, payment.network)
      }</span> ${payment.transactionHash === null ? "" : transactionLink(t, explorers, payment.network, payment.transactionHash)} ${confirmations}</li>`
    )
  }
  lines.push("</ul>")
  return lines
}

/** The payments as the receipt lists them: each amount on its network, each transaction linked to its explorer. */
const paymentLines = (parts: InvoiceParts, t: Strings, explorers: Explorers) => {
  const payments = counted(parts)
  return {
    amounts: payments.map((payment) => `${escape(formatAtomic(payment.amountAtomic, payment.decimals))} ${assetOnNetwork(t, payment.assetCode, payment.network)}`),
    hashes: payments.flatMap((payment) => payment.transactionHash === null ? [] : [transactionLink(t, explorers, payment.network, payment.transactionHash)])
  }
}

/** What was paid (USD and per payment), when, by which transactions, for which invoice. */
const receiptList = (parts: InvoiceParts, t: Strings, explorers: Explorers, at: { readonly label: string; readonly date: Date | null }) => {
  const { invoice } = parts
  const { amounts, hashes } = paymentLines(parts, t, explorers)
  const paidMicros = invoice.receivedMicros > 0n ? invoice.receivedMicros : invoice.amountMicros
  const lines = [
    `<h2 class="receipt-title">${escape(t.receipt)}</h2>`,
    `<dl class="receipt">`,
    `<dt>${escape(t.amountPaid)}</dt><dd class="receipt-amount"><strong>${usd(t, paidMicros)}</strong>${amounts.length > 0 ? `<br>${amounts.join("<br>")}` : ""}</dd>`
  ]
  if (at.date !== null) lines.push(`<dt>${escape(at.label)}</dt><dd class="receipt-time">${timeOf(t, at.date)}</dd>`)
  lines.push(`<dt>${escape(t.transaction)}</dt><dd class="receipt-tx">${hashes.length > 0 ? hashes.join("<br>") : escape(t.recordedBySeller)}</dd>`)
  lines.push(`<dt>${escape(t.invoice)}</dt><dd class="receipt-invoice"><code>${escape(invoice.id)}</code></dd>`, "</dl>")
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
  const lines = [`<p class="late-lead">${escape(lead)}</p>`]
  if (closedUnpaid) lines.push(`<p class="late-next">${escape(t.late.closedUnpaid)}</p>`)
  else lines.push(`<p class="late-next">${escape(t.late.review)}</p>`, `<p class="hint">${escape(t.late.noMore)}</p>`)
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
      return [`<p>${escape(t.awaiting)}</p>`]
    case "partially_paid": {
      const remaining = owedMicros(invoice.amountMicros, invoice.receivedMicros)
      return [
        `<p>${escape(t.partiallyPaid)}</p>`,
        `<p class="progress">${escape(t.received)} <strong class="received">${usd(t, invoice.receivedMicros)}</strong> · ${escape(t.remaining)} <strong class="remaining">${
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
      return [`<p class="warning">${escape(t.expired)}</p>`]
    default:
      return [`<p class="warning">${escape(t.voided)}</p>`]
  }
}

/** A payment seen, its confirmations counted: the paid option's network's count, not the largest of all options. */
const detectedLines = (parts: InvoiceParts, t: Strings, explorers: Explorers, paid: PaymentOptionRecord | undefined) => {
  const required = Math.max(paid?.requiredConfirmations ?? 1, 1)
  const shown = Math.min(parts.invoice.confirmations, required)
  const network = networkName(t, paid?.network ?? counted(parts).at(-1)?.network ?? "")
  return [
    `<p class="detected">${escape(fill(t.detected, { network }))} (<span class="confirmations">${shown}</span> / <span class="required-confirmations">${required}</span> ${
      escape(t.confirmations)
    })</p>`,
    `<progress class="confirmation-progress" max="${required}" value="${shown}" aria-label="${escape(t.confirmations)}"></progress>`,
    `<p class="detected-wait">${escape(fill(t.detectedWait, { minutes: String(usualConfirmationMinutes(paid?.network ?? "", required)) }))}</p>`,
    ...transactionList(parts, t, explorers)
  ]
}

const paidLines = (parts: InvoiceParts, t: Strings, explorers: Explorers, status: "confirmed" | "paid_out_of_band") => {
  const { invoice } = parts
  const lines = [`<p class="success">${escape(status === "confirmed" ? t.confirmed : t.paidOutOfBand)}</p>`, ...receipt(parts, t, explorers, status)]
  if (invoice.redirectUrl !== null) {
    lines.push(`<p><a class="button primary return" href="${escape(invoice.redirectUrl)}">${escape(t.returnToShop)}</a></p>`)
    lines.push(`<p class="hint">${escape(t.returningSoon)}</p>`)
  }
  return lines
}
