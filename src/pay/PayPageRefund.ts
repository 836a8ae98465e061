import type { Explorers } from "./Explorers.ts"
import { html, joined } from "./Html.ts"
import type { Strings } from "./Strings.ts"

// The payer page's refund section (issue #40), drawn by the script (browser/Refunds.ts).

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
export const refundSection = (t: Strings, explorers: Explorers) => {
  const r = t.refund
  const data: RefundPageData = { texts: r, networks: t.network, explorers }
  return joined([
    html`<section class="refund" id="refund" aria-labelledby="refund-title" data-refund="${JSON.stringify(data)}" data-keep="refund" hidden>`,
    html`<h2 id="refund-title">${r.title}</h2>`,
    html`<div role="status" aria-live="polite"><ul class="refunds"></ul></div>`,
    html`<div class="refund-offer" hidden>`,
    html`<p class="refund-reason"></p>`,
    html`<p class="refund-single"></p>`,
    html`<p><button type="button" class="button primary refund-open" aria-expanded="false" aria-controls="refund-form">${r.offer}</button></p>`,
    html`<form class="refund-form" id="refund-form" novalidate hidden>`,
    html`<fieldset class="refund-options"><legend>${r.choose}</legend></fieldset>`,
    html`<label for="refund-address" class="refund-address-label"></label>`,
    html`<input id="refund-address" name="refundAddress" required autocomplete="off" autocapitalize="off" spellcheck="false" aria-describedby="refund-address-hint refund-address-error">`,
    html`<p class="hint" id="refund-address-hint"></p>`,
    html`<p class="field-error" id="refund-address-error" role="alert"></p>`,
    html`<label for="refund-email">${r.email}</label>`,
    html`<input id="refund-email" name="email" type="email" autocomplete="email" maxlength="254" aria-describedby="refund-email-error">`,
    html`<p class="field-error" id="refund-email-error" role="alert"></p>`,
    html`<p class="field-error refund-error" role="alert"></p>`,
    html`<p class="refund-sign-row" hidden><button type="submit" class="button primary refund-sign" value="sign">${r.sign}</button> <span class="hint">${r.signHint}</span></p>`,
    html`<p><button type="submit" class="button primary refund-submit">${r.submit}</button></p>`,
    html`</form>`,
    html`</div>`,
    html`</section>`
  ])
}
