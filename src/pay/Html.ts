/** Markup helpers of the payer page's server-rendered parts. */

/** Text made safe for HTML text and attribute values (double- or single-quoted). */
export const escape = (text: string): string => text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[char]!)

/** Markup already safe to insert: what `html` returns, and what `raw` vouches for. */
export class Html {
  readonly markup: string
  constructor(markup: string) {
    this.markup = markup
  }
  toString() {
    return this.markup
  }
}

/** Markup to insert as it is (a QR code's SVG, an icon): the caller vouches that it is safe. */
export const raw = (markup: string) => new Html(markup)

type Interpolated = Html | string | number | bigint | boolean | null | undefined | ReadonlyArray<Html | string>

const insert = (value: Interpolated): string =>
  value instanceof Html
    ? value.markup
    : Array.isArray(value)
    ? value.map((item) => insert(item as Interpolated)).join("")
    : value === null || value === undefined || value === false
    ? ""
    : escape(String(value))

/**
 * A template of markup whose interpolations are escaped by default: a string from the invoice or a
 * catalogue can never open a tag; only `Html` values (other `html` templates, `raw`) go in as markup.
 */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolated>): Html =>
  new Html(strings.reduce((out, text, index) => out + text + (index < values.length ? insert(values[index]) : ""), ""))

/** Markup parts joined by `separator` (a new line by default), still markup. */
export const joined = (parts: ReadonlyArray<Html>, separator = "\n"): Html => new Html(parts.map((part) => part.markup).join(separator))
