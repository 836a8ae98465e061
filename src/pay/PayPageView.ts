import { notPayableReason, payerFacingStatus } from "../domain/Payable.ts"
import { owedMicros } from "../domain/Coverage.ts"
import { remainingAtomic } from "../domain/Evidence.ts"
import type { PaymentOptionRecord } from "../domain/Invoice.ts"
import { type InvoiceParts, publicStatusView } from "../domain/InvoiceViews.ts"
import { formatAtomic, microsToNumber } from "../domain/Money.ts"
import { eip681Uri } from "../payments/PaymentUris.ts"
import { qrSvg } from "../payments/QrCode.ts"
import { DEFAULT_EXPLORERS, type Explorers, transactionUrl } from "./Explorers.ts"
import { assetIcon, networkIcon } from "./Icons.ts"
import { pageFingerprint } from "./PageFingerprint.ts"
import { usualConfirmationMinutes } from "./ConfirmationTime.ts"
import { testBanner } from "./TestBanner.ts"
import { fill, LANGUAGE_NAMES, LANGUAGES, type Language, STRINGS, type Strings } from "./Strings.ts"

/** The hashed asset names the page links to (set when the bundle is built). */
export interface PageAssets {
  readonly script: string
  readonly style: string
  readonly icon: string
}

const escape = (text: string): string => text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[char]!)

const MONEY = new Map(LANGUAGES.map((language) => [STRINGS[language], new Intl.NumberFormat(language, { style: "currency", currency: "USD" })]))

/** A USD amount in the page's locale ("$12.50", "12,50 $", "US$12.50"...). */
const usd = (t: Strings, micros: bigint) => (MONEY.get(t) ?? MONEY.get(STRINGS.en)!).format(microsToNumber(micros))

/**
 * A payment URI asking for `atomic` instead of the quoted amount (BIP21 and Solana Pay: decimal
 * `amount`; EIP-681: `uint256`). A wallet-contract option has no URI in the API (the spec gives
 * URIs to address-transfer options only), but its forwarder takes a plain token transfer: the page
 * asks for one with an EIP-681 transfer URI, so that a phone can pay it like any other option.
 */
export const uriForAmount = (option: PaymentOptionRecord, atomic: bigint): string | null => {
  if (option.railType === "wallet_contract") {
    const payload = option.optionPayload ?? {}
    const { chainId, contractAddress } = payload
    if (typeof chainId !== "number" || typeof contractAddress !== "string" || option.tokenContract === null) return null
    return eip681Uri(option.tokenContract, chainId, contractAddress, atomic)
  }
  if (option.paymentUri === null) return null
  if (option.paymentUri.startsWith("ethereum:")) return option.paymentUri.replace(/([?&]uint256=)\d+/, `$1${atomic}`)
  return option.paymentUri.replace(/([?&]amount=)[0-9.]+/, `$1${formatAtomic(atomic, option.decimals)}`)
}

/** Where the payer sends an option's payment: its forwarder contract or its address. */
const destinationOf = (option: PaymentOptionRecord): string => {
  const contract = option.optionPayload?.contractAddress
  return option.railType === "wallet_contract" ? (typeof contract === "string" ? contract : "") : option.destinationAddress ?? ""
}

/** An address in groups of four characters (after `0x`), for reading aloud and comparing; selecting it copies the plain address. */
export const addressGroups = (address: string): ReadonlyArray<string> => {
  const prefix = address.startsWith("0x") ? "0x" : ""
  const rest = address.slice(prefix.length)
  const groups = rest.match(/.{1,4}/g) ?? []
  return prefix === "" ? groups : [prefix, ...groups]
}

/**
 * The language picker: a link per language (`?lang=`, so it works without the script and under the
 * page's CSP), each named in its own language and marked with it.
 */
const languagePicker = (current: Language) =>
  [
    `<nav class="languages" aria-label="${escape(STRINGS[current].language)}"><ul>`,
    ...LANGUAGES.map((language) =>
      `<li><a href="?lang=${language}" lang="${language}" hreflang="${language}"${language === current ? ` aria-current="true"` : ""}>${escape(LANGUAGE_NAMES[language])}</a></li>`
    ),
    "</ul></nav>"
  ].join("")

const page = (language: Language, title: string, assets: PageAssets, body: string, data: Record<string, string> = {}) => {
  const attributes = Object.entries(data).map(([key, value]) => ` data-${key}="${escape(value)}"`).join("")
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<meta name="description" content="${escape(STRINGS[language].description)}">
<title>${escape(title)}</title>
<link rel="icon" href="/pay/assets/${assets.icon}" type="image/svg+xml">
<link rel="stylesheet" href="/pay/assets/${assets.style}">
<script type="module" src="/pay/assets/${assets.script}"></script>
</head>
<body>
<main class="card"${attributes}>
${body}
</main>
${languagePicker(language)}
</body>
</html>
`
}

export const notFoundPage = (language: Language, t: Strings, assets: PageAssets) =>
  page(language, t.notFoundTitle, assets, `<div class="summary"><h1>${escape(t.notFoundTitle)}</h1>\n<p class="message">${escape(t.notFound)}</p></div>`)

const networkName = (t: Strings, network: string) => (t.network as Record<string, string>)[network] ?? network

const UTC_DATES = new Map(
  LANGUAGES.map((language) => [STRINGS[language], new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" })])
)

/** A time in UTC, for the page without its script: ISO-like in English (as ever), the locale's own format otherwise. */
const utc = (t: Strings, date: Date) => t === STRINGS.en ? `${date.toISOString().replace("T", " ").slice(0, 16)} UTC` : `${UTC_DATES.get(t)!.format(date)} UTC`

const copyButton = (t: Strings, label: string, value: string) =>
  `<button type="button" class="copy" data-copy="${escape(value)}" data-copied="${escape(t.copied)}" aria-label="${escape(label)}">${escape(t.copy)}</button>`

/** The asset and network of an option, each with its mark. */
const assetOnNetwork = (t: Strings, assetCode: string, network: string) =>
  `<span class="asset-network"><span class="mark">${assetIcon(assetCode)}<span class="asset-code">${escape(assetCode)}</span></span> ${escape(t.on)} <span class="mark">${
    networkIcon(network)
  }<span class="network-name">${escape(networkName(t, network))}</span></span></span>`

const counted = (parts: InvoiceParts) => (parts.payments ?? []).filter((payment) => payment.invalidatedAt === null)

/** The buttons that pay an option from this device: its wallet link and a browser wallet. */
const walletActions = (option: PaymentOptionRecord, t: Strings, uri: string | null, destination: string, atomic: bigint) => {
  const payload = option.optionPayload ?? {}
  const actions: Array<string> = []
  if (uri !== null) actions.push(`<a class="button primary open-wallet" href="${escape(uri)}">${escape(t.openInWallet)}</a>`)
  if (option.network === "solana") {
    actions.push(`<button type="button" class="button" data-pay="solana" data-option-id="${option.id}">${escape(t.payWithWallet)}</button>`)
  } else if (option.tokenContract !== null && typeof payload.chainId === "number" && destination !== "") {
    actions.push(
      `<button type="button" class="button" data-pay="evm" data-chain-id="${payload.chainId}" data-token="${escape(option.tokenContract)}" data-to="${
        escape(destination)
      }" data-amount="${atomic}">${escape(t.payWithWallet)}</button>`
    )
  }
  return actions
}

/** What was received in this option so far and what is still to send there. */
const optionProgress = (parts: InvoiceParts, option: PaymentOptionRecord, t: Strings, amountText: string) => {
  const own = counted(parts).filter((payment) => payment.paymentOptionId === option.id)
  if (own.length === 0) return []
  const received = own.reduce((sum, payment) => sum + payment.amountAtomic, 0n)
  return [
    `<p class="option-progress">${escape(t.receivedHere)}: <strong class="option-received">${escape(formatAtomic(received, option.decimals))} ${
      escape(option.assetCode)
    }</strong> · ${escape(t.remainingHere)}: <strong class="option-remaining">${escape(amountText)} ${escape(option.assetCode)}</strong></p>`
  ]
}

/**
 * One option: the amount to send, then the ways to pay it from this device (on a phone the wallet
 * button comes before the QR code, within the first screen; on a desktop the code sits beside the
 * buttons), then the address to copy and the warning about the network.
 */
const optionSection = (parts: InvoiceParts, option: PaymentOptionRecord, t: Strings, selected: boolean) => {
  const atomic = remainingAtomic(parts.invoice.amountMicros, option, parts.payments ?? [])
  const amountText = formatAtomic(atomic, option.decimals)
  const uri = uriForAmount(option, atomic)
  const destination = destinationOf(option)
  const lines = [
    `<section class="option" id="option-${option.id}" data-option-id="${option.id}"${selected ? "" : " hidden"}>`,
    `<p class="send">${escape(t.sendExactly)} <strong class="asset-amount">${escape(amountText)} ${escape(option.assetCode)}</strong> ${escape(t.on)} ${
      escape(networkName(t, option.network))
    } ${copyButton(t, t.copyAmount, amountText)}</p>`,
    ...optionProgress(parts, option, t, amountText)
  ]
  const actions = walletActions(option, t, uri, destination, atomic)
  lines.push(`<div class="pay-here">`)
  if (actions.length > 0) lines.push(`<p class="actions">${actions.join(" ")}</p>`)
  if (uri !== null) lines.push(`<figure class="qr" role="img" aria-label="${escape(t.scan)}">${qrSvg(uri)}</figure>`)
  lines.push(`</div>`)
  if (destination !== "") {
    lines.push(
      `<p class="address-label">${escape(t.toAddress)}</p>`,
      `<p class="address"><code class="address-text">${addressGroups(destination).map((group) => `<span>${escape(group)}</span>`).join("")}</code> ${
        copyButton(t, t.copyAddress, destination)
      }</p>`,
      `<p class="send-only" role="note">${escape(fill(t.sendOnly, { asset: option.assetCode, network: networkName(t, option.network) }))}</p>`
    )
  }
  lines.push(`<p class="wallet-status" role="status" aria-live="polite" data-keep="wallet"></p>`, "</section>")
  return lines.join("\n")
}

const optionLabel = (t: Strings, option: PaymentOptionRecord) =>
  `${assetIcon(option.assetCode)}<span>${escape(`${option.assetCode} · ${networkName(t, option.network)}`)}</span>${networkIcon(option.network)}`

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
const transactionList = (parts: InvoiceParts, t: Strings, explorers: Explorers) => {
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

/** The option the payer paid with: the last one a payment was matched to. */
const paidOption = (parts: InvoiceParts): PaymentOptionRecord | undefined => {
  const id = parts.invoice.lastPaymentOptionId ?? counted(parts).at(-1)?.paymentOptionId
  return parts.options.find((option) => option.id === id)
}

/** A time in the payer's locale and zone: the script rewrites the text (Dates.ts); without it, UTC. */
const timeOf = (t: Strings, date: Date) => `<time datetime="${date.toISOString()}" data-local data-keep="${date.toISOString()}">${utc(t, date)}</time>`

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
const statusLines = (parts: InvoiceParts, t: Strings, explorers: Explorers, status: string, paid: PaymentOptionRecord | undefined) => {
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

/** What the refund script (browser/Refunds.ts) needs beside the API's answers: texts, network names, explorers. */
export interface RefundPageData {
  readonly texts: Strings["refund"]
  readonly networks: Strings["network"]
  readonly explorers: Explorers
}

/**
 * Whether the invoice may have something to refund (issue #40: an overpaid confirmed invoice, or an
 * exception closed either way): only then does the page ask the refund endpoint, so that an
 * ordinary paid or open invoice costs no extra request. The endpoint decides what is refundable.
 */
export const mayHaveRefunds = (
  invoice: { readonly receivedMicros: bigint; readonly amountMicros: bigint; readonly status: string; readonly exceptionStatus: string | null }
) => invoice.receivedMicros > 0n && (invoice.exceptionStatus === "closed" || (invoice.status === "confirmed" && invoice.receivedMicros > invoice.amountMicros))

/**
 * The refund section, hidden until the script has asked the refund endpoint and found something
 * to show: what can be refunded (with a form for the refund address and an optional email) and the
 * refunds already requested, with their status. It needs the script (the page's CSP allows no form
 * submission), so without it nothing shows.
 */
const refundSection = (t: Strings, explorers: Explorers) => {
  const r = t.refund
  const data: RefundPageData = { texts: r, networks: t.network, explorers }
  return [
    `<section class="refund" id="refund" aria-labelledby="refund-title" data-refund="${escape(JSON.stringify(data))}" data-keep="refund" hidden>`,
    `<h2 id="refund-title">${escape(r.title)}</h2>`,
    `<div role="status" aria-live="polite"><ul class="refunds"></ul></div>`,
    `<div class="refund-offer" hidden>`,
    `<p class="refund-reason"></p>`,
    `<p class="refund-single"></p>`,
    `<p><button type="button" class="button primary refund-open" aria-expanded="false" aria-controls="refund-form">${escape(r.offer)}</button></p>`,
    `<form class="refund-form" id="refund-form" novalidate hidden>`,
    `<fieldset class="refund-options"><legend>${escape(r.choose)}</legend></fieldset>`,
    `<label for="refund-address" class="refund-address-label"></label>`,
    `<input id="refund-address" name="refundAddress" required autocomplete="off" autocapitalize="off" spellcheck="false" aria-describedby="refund-address-hint refund-address-error">`,
    `<p class="hint" id="refund-address-hint"></p>`,
    `<p class="field-error" id="refund-address-error" role="alert"></p>`,
    `<label for="refund-email">${escape(r.email)}</label>`,
    `<input id="refund-email" name="email" type="email" autocomplete="email" maxlength="254" aria-describedby="refund-email-error">`,
    `<p class="field-error" id="refund-email-error" role="alert"></p>`,
    `<p class="field-error refund-error" role="alert"></p>`,
    `<p class="refund-sign-row" hidden><button type="submit" class="button primary refund-sign" value="sign">${escape(r.sign)}</button> <span class="hint">${
      escape(r.signHint)
    }</span></p>`,
    `<p><button type="submit" class="button primary refund-submit">${escape(r.submit)}</button></p>`,
    `</form>`,
    `</div>`,
    `</section>`
  ].join("\n")
}

/** Who issued the invoice, to whom, for what and how much, and until when it can be paid. */
const summaryOf = (parts: InvoiceParts, t: Strings, payable: boolean) => {
  const { invoice } = parts
  const lines: Array<string> = ["<header>"]
  if (invoice.issuedBy !== null) lines.push(`<p class="issuer">${escape(t.issuedBy)} <strong>${escape(invoice.issuedBy)}</strong></p>`)
  lines.push(`<h1>${escape(invoice.productName ?? t.invoice)}</h1>`)
  lines.push(`<p class="amount" aria-label="${escape(t.amountDue)}">${usd(t, invoice.amountMicros)}</p>`)
  if (invoice.billTo !== null) lines.push(`<p class="bill-to">${escape(t.billTo)} ${escape(invoice.billTo)}</p>`)
  lines.push("</header>")
  if (!payable) return lines
  const timing = invoice.timing
  lines.push(
    timing.mode === "immediate"
      ? `<p class="deadline">${escape(t.timeLeft)}: <time class="countdown" datetime="${timing.payableUntilAt.toISOString()}" data-keep="countdown">${
        utc(t, timing.payableUntilAt)
      }</time></p>`
      : `<p class="deadline">${escape(t.dueOn)} ${timeOf(t, timing.dueAt)}. ${escape(t.gracePeriod)} ${timeOf(t, timing.payableUntilAt)}.</p>`
  )
  return lines
}

/** Tabs choosing among `options` (links that work without the script), or the one option's name. */
const optionChoice = (t: Strings, options: ReadonlyArray<PaymentOptionRecord>, selected: PaymentOptionRecord) =>
  options.length > 1
    ? [
      `<nav class="options" aria-label="${escape(t.options)}">`,
      ...options.map((option) =>
        `<a class="option-tab" href="?option=${option.id}" data-option-id="${option.id}"${option.id === selected.id ? ` aria-current="true"` : ""}>${optionLabel(t, option)}</a>`
      ),
      "</nav>"
    ]
    : [`<p class="single-option">${assetOnNetwork(t, selected.assetCode, selected.network)}</p>`]

/**
 * The payable options. After a partial payment the page leads with the option already paid into
 * (what remains is due there); the others fold behind "Pay the rest another way", so that the
 * payer is not invited to split the rest across networks.
 */
const payableOptions = (parts: InvoiceParts, t: Strings, ordered: ReadonlyArray<PaymentOptionRecord>, selected: PaymentOptionRecord, lead: PaymentOptionRecord | undefined) => {
  const lines = [`<div class="pay-options">`]
  const group = (options: ReadonlyArray<PaymentOptionRecord>, chosen: PaymentOptionRecord) => [
    `<div class="option-group">`,
    ...optionChoice(t, options, chosen),
    ...options.map((option) => optionSection(parts, option, t, option.id === chosen.id)),
    "</div>"
  ]
  if (lead === undefined) lines.push(...group(ordered, selected))
  else {
    lines.push(`<div class="option-group">`, `<p class="single-option">${assetOnNetwork(t, lead.assetCode, lead.network)}</p>`, optionSection(parts, lead, t, true), "</div>")
    const others = ordered.filter((option) => option.id !== lead.id)
    if (others.length > 0) {
      const chosen = others.find((option) => option.id === selected.id)
      lines.push(
        `<details class="other-options"${chosen === undefined ? "" : " open"}>`,
        `<summary>${escape(t.payRestElsewhere)}</summary>`,
        ...group(others, chosen ?? others[0]),
        "</details>"
      )
    }
  }
  lines.push("</div>")
  return lines
}

/**
 * The hosted payment page, rendered on the server from the invoice as the public endpoints show
 * it (no merchant-only field, no note) and readable without JavaScript: who issued it, to whom,
 * the amount and the time left (the summary), then per status the payment options (the remaining
 * amount after a partial payment, the paid option first), the payments seen with their
 * confirmations, a receipt, an account of a late payment, or a clear message. The script only
 * enhances it, and redraws it from this same markup when the invoice changes. Payable means before
 * `payableUntilAt` by `now`: past it the page is the expired one, even before the sweeper runs.
 * Mobile first: the summary above the payment; side by side on a wide screen (pay.css).
 */
export const payPage = (
  parts: InvoiceParts,
  options: {
    language: Language
    t: Strings
    assets: PageAssets
    now: Date
    selectedOptionId?: string | undefined
    explorers?: Explorers | undefined
    /** A test invoice (livemode false): the page says so at the top and offers simulated payments. */
    test?: boolean | undefined
  }
) => {
  const { invoice } = parts
  const { t, language, assets } = options
  const explorers = options.explorers ?? DEFAULT_EXPLORERS
  const status = payerFacingStatus(invoice, options.now)
  const payable = notPayableReason(invoice, options.now) === undefined
  const ordered = [...parts.options].sort((a, b) => Number(b.isDefault) - Number(a.isDefault))
  const paid = paidOption(parts)
  const lead = status === "partially_paid" && paid !== undefined && ordered.includes(paid) ? paid : undefined
  // An explicit choice first, then the option already paid into (what remains is due there), then the default.
  const selected = ordered.find((option) => option.id === options.selectedOptionId) ?? (paid !== undefined && ordered.includes(paid) ? paid : ordered[0])
  const payment = [`<section class="status status-${status}" id="status" role="status" aria-live="polite">`, ...statusLines(parts, t, explorers, status, paid), "</section>"]
  if (mayHaveRefunds(invoice)) payment.push(refundSection(t, explorers))
  if (payable && selected !== undefined) payment.push(...payableOptions(parts, t, ordered, selected, lead))
  // After a partial payment the options lead; the payments seen follow them.
  if (status === "partially_paid") payment.push(`<div class="payments-seen" aria-live="polite">`, ...transactionList(parts, t, explorers), "</div>")
  const banner = options.test === true ? `${testBanner(t, payable)}\n` : ""
  const body = `${banner}<div class="summary">\n${summaryOf(parts, t, payable).join("\n")}\n</div>\n<div class="payment">\n${payment.join("\n")}\n</div>`
  return page(language, `${t.title}: ${invoice.issuedBy ?? invoice.productName ?? t.invoice}`, assets, body, pageData(parts, t, options.now, status, payable))
}

/** What the script reads from the page: the state it shows (to tell a change), the deadline, the wallet texts. */
const pageData = (parts: InvoiceParts, t: Strings, now: Date, status: string, payable: boolean) => {
  const { invoice } = parts
  return {
    "invoice-id": invoice.id,
    status,
    received: invoice.receivedMicros.toString(),
    confirmations: String(invoice.confirmations),
    fingerprint: pageFingerprint({ ...publicStatusView(parts, now), status }),
    // The deadline by the server's clock (the page corrects for the payer's) and what to say then.
    ...(payable ? { "payable-until": invoice.timing.payableUntilAt.toISOString(), "rendered-at": now.toISOString(), "expired-text": t.expired } : {}),
    ...(invoice.redirectUrl !== null && (status === "confirmed" || status === "paid_out_of_band") ? { "redirect-url": invoice.redirectUrl } : {}),
    "wallet-none": t.walletNone,
    "wallet-sending": t.walletSending,
    "wallet-sent": t.walletSent,
    "wallet-failed": t.walletFailed,
    "open-in-tab": t.openInTab
  }
}
