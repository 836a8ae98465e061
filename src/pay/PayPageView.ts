import { notPayableReason, payerFacingStatus } from "../lifecycle/Payable.ts"
import { owedMicros } from "../domain/Coverage.ts"
import { remainingAtomic } from "../domain/Evidence.ts"
import type { PaymentOptionRecord } from "../domain/Invoice.ts"
import type { InvoiceParts } from "../domain/InvoiceViews.ts"
import { formatAtomic, microsToNumber } from "../domain/Money.ts"
import { eip681Uri } from "../payments/PaymentUris.ts"
import { qrSvg } from "../payments/QrCode.ts"
import { DEFAULT_EXPLORERS, type Explorers, transactionUrl } from "./Explorers.ts"
import { assetIcon, networkIcon } from "./Icons.ts"
import { fill, type Language, type Strings } from "./Strings.ts"

/** The hashed asset names the page links to (set when the bundle is built). */
export interface PageAssets {
  readonly script: string
  readonly style: string
  readonly icon: string
}

const escape = (text: string): string => text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[char]!)

const usd = (micros: bigint) => `$${microsToNumber(micros).toFixed(2)}`

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

const page = (language: Language, title: string, assets: PageAssets, body: string, data: Record<string, string> = {}) => {
  const attributes = Object.entries(data).map(([key, value]) => ` data-${key}="${escape(value)}"`).join("")
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(title)}</title>
<link rel="icon" href="/pay/assets/${assets.icon}" type="image/svg+xml">
<link rel="stylesheet" href="/pay/assets/${assets.style}">
<script type="module" src="/pay/assets/${assets.script}"></script>
</head>
<body>
<main class="card"${attributes}>
${body}
</main>
</body>
</html>
`
}

export const notFoundPage = (language: Language, t: Strings, assets: PageAssets) =>
  page(language, t.notFoundTitle, assets, `<div class="summary"><h1>${escape(t.notFoundTitle)}</h1>\n<p class="message">${escape(t.notFound)}</p></div>`)

const networkName = (t: Strings, network: string) => (t.network as Record<string, string>)[network] ?? network

const utc = (date: Date) => `${date.toISOString().replace("T", " ").slice(0, 16)} UTC`

const copyButton = (t: Strings, label: string, value: string) =>
  `<button type="button" class="copy" data-copy="${escape(value)}" data-copied="${escape(t.copied)}" aria-label="${escape(label)}">${escape(t.copy)}</button>`

/** The asset and network of an option, each with its mark. */
const assetOnNetwork = (t: Strings, assetCode: string, network: string) =>
  `<span class="asset-network"><span class="mark">${assetIcon(assetCode)}<span class="asset-code">${escape(assetCode)}</span></span> ${escape(t.on)} <span class="mark">${
    networkIcon(network)
  }<span class="network-name">${escape(networkName(t, network))}</span></span></span>`

const counted = (parts: InvoiceParts) => (parts.payments ?? []).filter((payment) => payment.invalidatedAt === null)

const optionSection = (parts: InvoiceParts, option: PaymentOptionRecord, t: Strings, selected: boolean) => {
  const { invoice } = parts
  const atomic = remainingAtomic(invoice.amountMicros, option, parts.payments ?? [])
  const amountText = formatAtomic(atomic, option.decimals)
  const payload = option.optionPayload ?? {}
  const uri = uriForAmount(option, atomic)
  const destination = destinationOf(option)
  const assetName = `${option.assetCode}`
  const lines = [
    `<section class="option" id="option-${option.id}" data-option-id="${option.id}"${selected ? "" : " hidden"}>`,
    `<p class="send">${escape(t.sendExactly)} <strong class="asset-amount">${escape(amountText)} ${escape(option.assetCode)}</strong> ${escape(t.on)} ${
      escape(networkName(t, option.network))
    } ${copyButton(t, t.copyAmount, amountText)}</p>`
  ]
  const own = counted(parts).filter((payment) => payment.paymentOptionId === option.id)
  if (own.length > 0) {
    const received = own.reduce((sum, payment) => sum + payment.amountAtomic, 0n)
    lines.push(
      `<p class="option-progress">${escape(t.receivedHere)}: <strong class="option-received">${escape(formatAtomic(received, option.decimals))} ${escape(assetName)}</strong> · ${
        escape(t.remainingHere)
      }: <strong class="option-remaining">${escape(amountText)} ${escape(assetName)}</strong></p>`
    )
  }
  if (uri !== null) lines.push(`<figure class="qr" aria-label="${escape(t.scan)}">${qrSvg(uri)}</figure>`)
  if (destination !== "") {
    lines.push(`<p class="address-label">${escape(t.toAddress)}</p>`)
    lines.push(
      `<p class="address"><code class="address-text">${addressGroups(destination).map((group) => `<span>${escape(group)}</span>`).join("")}</code> ${
        copyButton(t, t.copyAddress, destination)
      }</p>`
    )
    lines.push(`<p class="send-only" role="note">${escape(fill(t.sendOnly, { asset: option.assetCode, network: networkName(t, option.network) }))}</p>`)
  }
  const actions: Array<string> = []
  if (uri !== null) actions.push(`<a class="button open-wallet" href="${escape(uri)}">${escape(t.openInWallet)}</a>`)
  if (option.network === "solana") {
    actions.push(`<button type="button" class="button primary" data-pay="solana" data-option-id="${option.id}">${escape(t.payWithWallet)}</button>`)
  } else if (option.tokenContract !== null && typeof payload.chainId === "number" && destination !== "") {
    actions.push(
      `<button type="button" class="button primary" data-pay="evm" data-chain-id="${payload.chainId}" data-token="${escape(option.tokenContract)}" data-to="${
        escape(destination)
      }" data-amount="${atomic}">${escape(t.payWithWallet)}</button>`
    )
  }
  if (actions.length > 0) lines.push(`<p class="actions">${actions.join(" ")}</p>`)
  lines.push(`<p class="wallet-status" role="status" aria-live="polite"></p>`, "</section>")
  return lines.join("\n")
}

const optionLabel = (t: Strings, option: PaymentOptionRecord) =>
  `${assetIcon(option.assetCode)}<span>${escape(`${option.assetCode} · ${networkName(t, option.network)}`)}</span>${networkIcon(option.network)}`

const shortHash = (hash: string) => (hash.length > 20 ? `${hash.slice(0, 10)}…${hash.slice(-8)}` : hash)

/** A transaction hash linked to the network's public explorer (plain text without one). */
const transactionLink = (t: Strings, explorers: Explorers, network: string, hash: string) => {
  const url = transactionUrl(explorers, network, hash)
  const text = `<code class="tx-hash">${escape(shortHash(hash))}</code>`
  return url === undefined ?
    text :
    `<a class="tx-link" href="${escape(url)}" target="_blank" rel="noopener noreferrer" title="${escape(hash)}" aria-label="${
      escape(fill(t.viewTransaction, { network: networkName(t, network) }))
    }">${text}</a>`
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

const receipt = (parts: InvoiceParts, t: Strings, explorers: Explorers, status: "confirmed" | "paid_out_of_band") => {
  const { invoice } = parts
  const paidAt = (status === "confirmed" ? invoice.confirmedAt : invoice.paidOutOfBandAt) ?? invoice.confirmedAt ?? invoice.paidOutOfBandAt
  const payments = counted(parts)
  const amounts = payments.map((payment) => `${escape(formatAtomic(payment.amountAtomic, payment.decimals))} ${assetOnNetwork(t, payment.assetCode, payment.network)}`)
  const hashes = payments.flatMap((payment) => payment.transactionHash === null ? [] : [transactionLink(t, explorers, payment.network, payment.transactionHash)])
  const paidMicros = invoice.receivedMicros > 0n ? invoice.receivedMicros : invoice.amountMicros
  const lines = [
    `<h2 class="receipt-title">${escape(t.receipt)}</h2>`,
    `<dl class="receipt">`,
    `<dt>${escape(t.amountPaid)}</dt><dd class="receipt-amount"><strong>${usd(paidMicros)}</strong>${amounts.length > 0 ? `<br>${amounts.join("<br>")}` : ""}</dd>`
  ]
  if (paidAt !== null) lines.push(`<dt>${escape(t.paidAt)}</dt><dd class="receipt-time"><time datetime="${paidAt.toISOString()}">${utc(paidAt)}</time></dd>`)
  lines.push(`<dt>${escape(t.transaction)}</dt><dd class="receipt-tx">${hashes.length > 0 ? hashes.join("<br>") : escape(t.recordedBySeller)}</dd>`)
  lines.push(`<dt>${escape(t.invoice)}</dt><dd class="receipt-invoice"><code>${escape(invoice.id)}</code></dd>`, "</dl>")
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
    `<section class="refund" id="refund" aria-labelledby="refund-title" data-refund="${escape(JSON.stringify(data))}" hidden>`,
    `<h2 id="refund-title">${escape(r.title)}</h2>`,
    `<ul class="refunds" role="status" aria-live="polite"></ul>`,
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
    `<p><button type="submit" class="button primary">${escape(r.submit)}</button></p>`,
    `</form>`,
    `</div>`,
    `</section>`
  ].join("\n")
}

/**
 * The hosted payment page, rendered on the server from the invoice as the public endpoints show
 * it (no merchant-only field, no note) and readable without JavaScript: who issued it, to whom,
 * the amount and the time left (the summary), then per status the payment options (the remaining
 * amount after a partial payment, the paid option selected), the payments seen with their
 * confirmations, a receipt, or a clear message. The script only enhances it. Payable means before
 * `payableUntilAt` by `now`: past it the page is the expired one, even before the sweeper runs.
 * Mobile first: the summary above the payment; side by side on a wide screen (pay.css).
 */
export const payPage = (
  parts: InvoiceParts,
  options: { language: Language; t: Strings; assets: PageAssets; now: Date; selectedOptionId?: string | undefined; explorers?: Explorers | undefined }
) => {
  const { invoice } = parts
  const { t, language, assets } = options
  const explorers = options.explorers ?? DEFAULT_EXPLORERS
  const status = payerFacingStatus(invoice, options.now)
  const payable = notPayableReason(invoice, options.now) === undefined
  const ordered = [...parts.options].sort((a, b) => Number(b.isDefault) - Number(a.isDefault))
  const paid = paidOption(parts)
  // An explicit choice first, then the option already paid into (what remains is due there), then the default.
  const selected = ordered.find((option) => option.id === options.selectedOptionId) ?? (paid !== undefined && ordered.includes(paid) ? paid : ordered[0])
  const summary: Array<string> = ["<header>"]
  if (invoice.issuedBy !== null) summary.push(`<p class="issuer">${escape(t.issuedBy)} <strong>${escape(invoice.issuedBy)}</strong></p>`)
  summary.push(`<h1>${escape(invoice.productName ?? t.invoice)}</h1>`)
  summary.push(`<p class="amount" aria-label="${escape(t.amountDue)}">${usd(invoice.amountMicros)}</p>`)
  if (invoice.billTo !== null) summary.push(`<p class="bill-to">${escape(t.billTo)} ${escape(invoice.billTo)}</p>`)
  summary.push("</header>")

  const remaining = owedMicros(invoice.amountMicros, invoice.receivedMicros)
  const statusLines: Array<string> = []
  switch (status) {
    case "awaiting_payment":
      statusLines.push(`<p>${escape(t.awaiting)}</p>`)
      break
    case "partially_paid":
      statusLines.push(`<p>${escape(t.partiallyPaid)}</p>`)
      statusLines.push(
        `<p class="progress">${escape(t.received)} <strong class="received">${usd(invoice.receivedMicros)}</strong> · ${escape(t.remaining)} <strong class="remaining">${
          usd(remaining)
        }</strong></p>`
      )
      statusLines.push(...transactionList(parts, t, explorers))
      break
    case "payment_detected": {
      // The count that matters is the paid option's network's, not the largest of all options.
      const required = Math.max(paid?.requiredConfirmations ?? 1, 1)
      const network = networkName(t, paid?.network ?? counted(parts).at(-1)?.network ?? "")
      statusLines.push(
        `<p class="detected">${escape(fill(t.detected, { network }))} (<span class="confirmations">${
          Math.min(invoice.confirmations, required)
        }</span> / <span class="required-confirmations">${required}</span> ${escape(t.confirmations)})</p>`
      )
      statusLines.push(`<progress class="confirmation-progress" max="${required}" value="${Math.min(invoice.confirmations, required)}"></progress>`)
      statusLines.push(...transactionList(parts, t, explorers))
      break
    }
    case "confirmed":
    case "paid_out_of_band":
      statusLines.push(`<p class="success">${escape(status === "confirmed" ? t.confirmed : t.paidOutOfBand)}</p>`)
      statusLines.push(...receipt(parts, t, explorers, status))
      if (invoice.redirectUrl !== null) {
        statusLines.push(`<p><a class="button primary return" href="${escape(invoice.redirectUrl)}">${escape(t.returnToShop)}</a></p>`)
        statusLines.push(`<p class="hint">${escape(t.returningSoon)}</p>`)
      }
      break
    case "expired":
      statusLines.push(`<p class="warning">${escape(t.expired)}</p>`)
      break
    case "voided":
      statusLines.push(`<p class="warning">${escape(t.voided)}</p>`)
      break
  }
  const payment: Array<string> = [`<section class="status status-${status}" id="status" role="status" aria-live="polite">\n${statusLines.join("\n")}\n</section>`]
  if (mayHaveRefunds(invoice)) payment.push(refundSection(t, explorers))

  if (payable) {
    const timing = invoice.timing
    summary.push(
      timing.mode === "immediate"
        ? `<p class="deadline">${escape(t.timeLeft)}: <time class="countdown" datetime="${timing.payableUntilAt.toISOString()}">${utc(timing.payableUntilAt)}</time></p>`
        : `<p class="deadline">${escape(t.dueOn)} <time datetime="${timing.dueAt.toISOString()}">${timing.dueAt.toISOString().slice(0, 10)}</time>. ${
          escape(t.gracePeriod)
        } <time datetime="${timing.payableUntilAt.toISOString()}">${timing.payableUntilAt.toISOString().slice(0, 10)}</time>.</p>`
    )
    if (ordered.length > 1) {
      payment.push(`<nav class="options" aria-label="${escape(t.options)}">`)
      for (const option of ordered) {
        const current = option.id === selected.id ? ` aria-current="true"` : ""
        payment.push(`<a class="option-tab" href="?option=${option.id}" data-option-id="${option.id}"${current}>${optionLabel(t, option)}</a>`)
      }
      payment.push("</nav>")
    } else if (selected !== undefined) {
      payment.push(`<p class="single-option">${assetOnNetwork(t, selected.assetCode, selected.network)}</p>`)
    }
    for (const option of ordered) payment.push(optionSection(parts, option, t, option.id === selected.id))
  }

  const body = `<div class="summary">\n${summary.join("\n")}\n</div>\n<div class="payment">\n${payment.join("\n")}\n</div>`
  return page(language, `${t.title}: ${invoice.issuedBy ?? invoice.productName ?? t.invoice}`, assets, body, {
    "invoice-id": invoice.id,
    status,
    received: invoice.receivedMicros.toString(),
    confirmations: String(invoice.confirmations),
    // The deadline by the server's clock (the page corrects for the payer's) and what to say then.
    ...(payable ? { "payable-until": invoice.timing.payableUntilAt.toISOString(), "rendered-at": options.now.toISOString(), "expired-text": t.expired } : {}),
    ...(invoice.redirectUrl !== null && (status === "confirmed" || status === "paid_out_of_band") ? { "redirect-url": invoice.redirectUrl } : {}),
    "wallet-none": t.walletNone,
    "wallet-sending": t.walletSending,
    "wallet-sent": t.walletSent,
    "wallet-failed": t.walletFailed
  })
}
