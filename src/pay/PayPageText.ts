import type { InvoiceParts, PaymentOptionRecord } from "../domain/Invoice.ts"
import { microsToNumber } from "../domain/Money.ts"
import { type Html, html, raw } from "./Html.ts"
import { assetIcon, networkIcon } from "./Icons.ts"
import { LANGUAGES, STRINGS, type Strings } from "./Strings.ts"

// What several parts of the payer page share: amounts, times, network names, copy buttons.

const MONEY = new Map(LANGUAGES.map((language) => [STRINGS[language], new Intl.NumberFormat(language, { style: "currency", currency: "USD" })]))

/** A USD amount in the page's locale ("$12.50", "12,50 $", "US$12.50"...). */
export const usd = (t: Strings, micros: bigint) => (MONEY.get(t) ?? MONEY.get(STRINGS.en)!).format(microsToNumber(micros))

export const networkName = (t: Strings, network: string) => (t.network as Record<string, string>)[network] ?? network

const UTC_DATES = new Map(
  LANGUAGES.map((language) => [STRINGS[language], new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" })])
)

/** A time in UTC, for the page without its script: ISO-like in English (as ever), the locale's own format otherwise. */
export const utc = (t: Strings, date: Date) => t === STRINGS.en ? `${date.toISOString().replace("T", " ").slice(0, 16)} UTC` : `${UTC_DATES.get(t)!.format(date)} UTC`

export const copyButton = (t: Strings, label: string, value: string): Html =>
  html`<button type="button" class="copy" data-copy="${value}" data-copied="${t.copied}" aria-label="${label}">${t.copy}</button>`

/** The asset and network of an option, each with its mark. */
export const assetOnNetwork = (t: Strings, assetCode: string, network: string): Html =>
  html`<span class="asset-network"><span class="mark">${raw(assetIcon(assetCode))}<span class="asset-code">${assetCode}</span></span> ${t.on} <span class="mark">${
    raw(networkIcon(network))
  }<span class="network-name">${networkName(t, network)}</span></span></span>`

export const counted = (parts: InvoiceParts) => (parts.payments ?? []).filter((payment) => payment.invalidatedAt === null)

/** The option the payer paid with: the last one a payment was matched to. */
export const paidOption = (parts: InvoiceParts): PaymentOptionRecord | undefined => {
  const id = parts.invoice.lastPaymentOptionId ?? counted(parts).at(-1)?.paymentOptionId
  return parts.options.find((option) => option.id === id)
}

/** A time in the payer's locale and zone: the script rewrites the text (Dates.ts); without it, UTC. */
export const timeOf = (t: Strings, date: Date): Html => html`<time datetime="${date.toISOString()}" data-local data-keep="${date.toISOString()}">${utc(t, date)}</time>`
