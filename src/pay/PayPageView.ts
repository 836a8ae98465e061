import { notPayableReason, payerFacingStatus } from "../domain/Payable.ts"
import { type InvoiceParts, publicStatusView } from "../domain/InvoiceViews.ts"
import { DEFAULT_EXPLORERS, type Explorers } from "./Explorers.ts"
import { type Html, html, joined } from "./Html.ts"
import { pageFingerprint } from "./PageFingerprint.ts"
import { payableOptions } from "./PayPageOptions.ts"
import { mayHaveRefunds, refundSection } from "./PayPageRefund.ts"
import { statusLines, transactionList } from "./PayPageStatus.ts"
import { paidOption, timeOf, usd, utc } from "./PayPageText.ts"
import { LANGUAGE_NAMES, LANGUAGES, type Language, STRINGS, type Strings } from "./Strings.ts"
import { testBanner } from "./TestBanner.ts"

export { addressGroups, uriForAmount } from "./PayPageOptions.ts"
export { mayHaveRefunds, type RefundPageData } from "./PayPageRefund.ts"

/** The hashed asset names the page links to (set when the bundle is built). */
export interface PageAssets {
  readonly script: string
  readonly style: string
  readonly icon: string
}
/**
 * The language picker: a link per language (`?lang=`, so it works without the script and under the
 * page's CSP), each named in its own language and marked with it.
 */
const languagePicker = (current: Language): Html =>
  joined([
    html`<nav class="languages" aria-label="${STRINGS[current].language}"><ul>`,
    ...LANGUAGES.map((language) =>
      html`<li><a href="?lang=${language}" lang="${language}" hreflang="${language}"${language === current ? html` aria-current="true"` : ""}>${LANGUAGE_NAMES[language]}</a></li>`
    ),
    html`</ul></nav>`
  ], "")

const page = (language: Language, title: string, assets: PageAssets, body: Html, data: Record<string, string> = {}): string => {
  const attributes = Object.entries(data).map(([key, value]) => html` data-${key}="${value}"`)
  return html`<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<meta name="description" content="${STRINGS[language].description}">
<title>${title}</title>
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
`.markup
}

export const notFoundPage = (language: Language, t: Strings, assets: PageAssets) =>
  page(language, t.notFoundTitle, assets, html`<div class="summary"><h1>${t.notFoundTitle}</h1>\n<p class="message">${t.notFound}</p></div>`)
/** Who issued the invoice, to whom, for what and how much, and until when it can be paid. */
const summaryOf = (parts: InvoiceParts, t: Strings, payable: boolean) => {
  const { invoice } = parts
  const lines: Array<Html> = [html`<header>`]
  if (invoice.issuedBy !== null) lines.push(html`<p class="issuer">${t.issuedBy} <strong>${invoice.issuedBy}</strong></p>`)
  lines.push(html`<h1>${invoice.productName ?? t.invoice}</h1>`)
  lines.push(html`<p class="amount" aria-label="${t.amountDue}">${usd(t, invoice.amountMicros)}</p>`)
  if (invoice.billTo !== null) lines.push(html`<p class="bill-to">${t.billTo} ${invoice.billTo}</p>`)
  lines.push(html`</header>`)
  if (!payable) return lines
  const timing = invoice.timing
  lines.push(
    timing.mode === "immediate"
      ? html`<p class="deadline">${t.timeLeft}: <time class="countdown" datetime="${timing.payableUntilAt.toISOString()}" data-keep="countdown">${
        utc(t, timing.payableUntilAt)
      }</time></p>`
      : html`<p class="deadline">${t.dueOn} ${timeOf(t, timing.dueAt)}. ${t.gracePeriod} ${timeOf(t, timing.payableUntilAt)}.</p>`
  )
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
  const payment: Array<Html> = [html`<section class="status status-${status}" id="status" role="status" aria-live="polite">`, ...statusLines(parts, t, explorers, status, paid),
    html`</section>`]
  if (mayHaveRefunds(invoice)) payment.push(refundSection(t, explorers))
  if (payable && selected !== undefined) payment.push(...payableOptions(parts, t, ordered, selected, lead))
  // After a partial payment the options lead; the payments seen follow them.
  if (status === "partially_paid") payment.push(html`<div class="payments-seen" aria-live="polite">`, ...transactionList(parts, t, explorers), html`</div>`)
  const banner = options.test === true ? html`${testBanner(t, payable)}\n` : ""
  const body = html`${banner}<div class="summary">\n${joined(summaryOf(parts, t, payable))}\n</div>\n<div class="payment">\n${joined(payment)}\n</div>`
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
