import { notPayableReason, payerFacingStatus } from "../lifecycle/Payable.ts"
import { remainingAtomic } from "../domain/Evidence.ts"
import type { PaymentOptionRecord } from "../domain/Invoice.ts"
import type { InvoiceParts } from "../domain/InvoiceViews.ts"
import { formatAtomic, microsToNumber } from "../domain/Money.ts"
import { qrSvg } from "../payments/QrCode.ts"
import type { Language, Strings } from "./Strings.ts"

/** The hashed asset names the page links to (set when the bundle is built). */
export interface PageAssets {
  readonly script: string
  readonly style: string
  readonly icon: string
}

const escape = (text: string): string => text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[char]!)

const usd = (micros: bigint) => `$${microsToNumber(micros).toFixed(2)}`

/** A payment URI asking for `atomic` instead of the quoted amount (BIP21 and Solana Pay: decimal `amount`; EIP-681: `uint256`). */
export const uriForAmount = (option: PaymentOptionRecord, atomic: bigint): string | null => {
  if (option.paymentUri === null) return null
  if (option.paymentUri.startsWith("ethereum:")) return option.paymentUri.replace(/([?&]uint256=)\d+/, `$1${atomic}`)
  return option.paymentUri.replace(/([?&]amount=)[0-9.]+/, `$1${formatAtomic(atomic, option.decimals)}`)
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
  page(language, t.notFoundTitle, assets, `<h1>${escape(t.notFoundTitle)}</h1>\n<p class="message">${escape(t.notFound)}</p>`)

const networkName = (t: Strings, network: string) => (t.network as Record<string, string>)[network] ?? network

const copyButton = (t: Strings, label: string, value: string) =>
  `<button type="button" class="copy" data-copy="${escape(value)}" data-copied="${escape(t.copied)}" aria-label="${escape(label)}">${escape(t.copy)}</button>`

const optionSection = (parts: InvoiceParts, option: PaymentOptionRecord, t: Strings, selected: boolean) => {
  const { invoice } = parts
  const atomic = remainingAtomic(invoice.amountMicros, option, parts.payments ?? [])
  const amountText = formatAtomic(atomic, option.decimals)
  const payload = option.optionPayload ?? {}
  const uri = uriForAmount(option, atomic)
  const destination = option.railType === "wallet_contract" ? String(payload.contractAddress ?? "") : option.destinationAddress ?? ""
  const lines = [
    `<section class="option" id="option-${option.id}" data-option-id="${option.id}"${selected ? "" : " hidden"}>`,
    `<p class="send">${escape(t.sendExactly)} <strong class="asset-amount">${escape(amountText)} ${escape(option.assetCode)}</strong> ${escape(t.on)} ${
      escape(networkName(t, option.network))
    } ${copyButton(t, t.copyAmount, amountText)}</p>`
  ]
  if (uri !== null) lines.push(`<figure class="qr" aria-label="${escape(t.scan)}">${qrSvg(uri)}</figure>`)
  if (destination !== "") {
    lines.push(`<p class="address-label">${escape(t.toAddress)}</p>`)
    lines.push(`<p class="address"><code>${escape(destination)}</code> ${copyButton(t, t.copyAddress, destination)}</p>`)
  }
  const actions: Array<string> = []
  if (uri !== null) actions.push(`<a class="button" href="${escape(uri)}">${escape(t.openInWallet)}</a>`)
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

const optionLabel = (t: Strings, option: PaymentOptionRecord) => `${option.assetCode} · ${networkName(t, option.network)}`

/**
 * The hosted payment page, rendered on the server from the invoice as the public endpoints show
 * it (no merchant-only field, no note) and readable without JavaScript: who issued it, to whom,
 * the amount, the time left, and per status either the payment options (the remaining amount
 * after a partial payment) or a clear message. The script only enhances it. Payable means before
 * `payableUntilAt` by `now`: past it the page is the expired one, even before the sweeper runs.
 */
export const payPage = (
  parts: InvoiceParts,
  options: { language: Language; t: Strings; assets: PageAssets; now: Date; selectedOptionId?: string | undefined }
) => {
  const { invoice } = parts
  const { t, language, assets } = options
  const status = payerFacingStatus(invoice, options.now)
  const payable = notPayableReason(invoice, options.now) === undefined
  const ordered = [...parts.options].sort((a, b) => Number(b.isDefault) - Number(a.isDefault))
  const selected = ordered.find((option) => option.id === options.selectedOptionId) ?? ordered[0]
  const body: Array<string> = ["<header>"]
  if (invoice.issuedBy !== null) body.push(`<p class="issuer">${escape(t.issuedBy)} <strong>${escape(invoice.issuedBy)}</strong></p>`)
  body.push(`<h1>${escape(invoice.productName ?? t.invoice)}</h1>`)
  body.push(`<p class="amount" aria-label="${escape(t.amountDue)}">${usd(invoice.amountMicros)}</p>`)
  if (invoice.billTo !== null) body.push(`<p class="bill-to">${escape(t.billTo)} ${escape(invoice.billTo)}</p>`)
  body.push("</header>")

  const remaining = invoice.amountMicros > invoice.receivedMicros ? invoice.amountMicros - invoice.receivedMicros : 0n
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
      break
    case "payment_detected": {
      const required = Math.max(...parts.options.map((option) => option.requiredConfirmations), 1)
      statusLines.push(`<p>${escape(t.detected)} (<span class="confirmations">${invoice.confirmations}</span> / ${required} ${escape(t.confirmations)})</p>`)
      break
    }
    case "confirmed":
    case "paid_out_of_band":
      statusLines.push(`<p class="success">${escape(status === "confirmed" ? t.confirmed : t.paidOutOfBand)}</p>`)
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
  body.push(`<section class="status status-${status}" id="status" role="status" aria-live="polite">\n${statusLines.join("\n")}\n</section>`)

  if (payable) {
    const timing = invoice.timing
    body.push(
      timing.mode === "immediate"
        ? `<p class="deadline">${escape(t.timeLeft)}: <time class="countdown" datetime="${timing.payableUntilAt.toISOString()}">${
          timing.payableUntilAt.toISOString().replace("T", " ").slice(0, 16)
        } UTC</time></p>`
        : `<p class="deadline">${escape(t.dueOn)} <time datetime="${timing.dueAt.toISOString()}">${timing.dueAt.toISOString().slice(0, 10)}</time>. ${
          escape(t.gracePeriod)
        } <time datetime="${timing.payableUntilAt.toISOString()}">${timing.payableUntilAt.toISOString().slice(0, 10)}</time>.</p>`
    )
    if (ordered.length > 1) {
      body.push(`<nav class="options" aria-label="${escape(t.options)}">`)
      for (const option of ordered) {
        const current = option.id === selected.id ? ` aria-current="true"` : ""
        body.push(`<a class="option-tab" href="?option=${option.id}" data-option-id="${option.id}"${current}>${escape(optionLabel(t, option))}</a>`)
      }
      body.push("</nav>")
    }
    for (const option of ordered) body.push(optionSection(parts, option, t, option.id === selected.id))
  }

  return page(language, `${t.title}: ${invoice.issuedBy ?? invoice.productName ?? t.invoice}`, assets, body.join("\n"), {
    "invoice-id": invoice.id,
    status,
    received: invoice.receivedMicros.toString(),
    confirmations: String(invoice.confirmations),
    ...(invoice.redirectUrl !== null && (status === "confirmed" || status === "paid_out_of_band") ? { "redirect-url": invoice.redirectUrl } : {}),
    "wallet-none": t.walletNone,
    "wallet-sending": t.walletSending,
    "wallet-sent": t.walletSent,
    "wallet-failed": t.walletFailed
  })
}
