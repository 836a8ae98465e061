import { describe, expect, it } from "vitest"
import type { InvoiceParts, InvoiceRecord } from "../../src/domain/Invoice.ts"
import { payPage } from "../../src/pay/PayPageView.ts"
import { fill, LANGUAGES, languageOf, pageLanguage, STRINGS, supportedLanguage } from "../../src/pay/Strings.ts"

/** Issue #57 item 5: the payment page in the payer's language. */

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort()

/** Every key path of a catalogue with its placeholders, e.g. `refund.amountOn: amount,asset,network`. */
const shape = (catalogue: unknown, path = ""): ReadonlyArray<string> =>
  typeof catalogue === "string"
    ? [`${path}: ${placeholders(catalogue).join(",")}`]
    : Object.entries(catalogue as object).flatMap(([key, value]) => shape(value, path === "" ? key : `${path}.${key}`)).sort()

const DEADLINE = new Date("2026-03-01T12:00:00.000Z")
const invoice = {
  id: "00000000-0000-4000-8000-000000000001",
  amountMicros: 1_234_500_000n,
  status: "awaiting_payment",
  timing: { mode: "due_date", dueAt: DEADLINE, payableUntilAt: new Date(DEADLINE.getTime() + 86_400_000) },
  productName: "Tea",
  issuedBy: "Shop",
  billTo: null,
  redirectUrl: null,
  receivedMicros: 0n,
  confirmedMicros: 0n,
  confirmations: 0,
  lastPaymentOptionId: null,
  exceptionType: null,
  exceptionStatus: null,
  createdAt: new Date(DEADLINE.getTime() - 3_600_000)
} as unknown as InvoiceRecord
const parts: InvoiceParts = { invoice, options: [], payments: [] }
const render = (language: (typeof LANGUAGES)[number]) =>
  payPage(parts, { language, t: STRINGS[language], assets: { script: "s.js", style: "s.css", icon: "i.svg" }, now: new Date(DEADLINE.getTime() - 60_000) })

describe("the payment page's languages", () => {
  it("speaks the ten languages of the issue", () => {
    expect([...LANGUAGES].sort()).toEqual(["de", "en", "es", "fr", "it", "ja", "pt-BR", "ru", "tr", "zh-CN"])
  })

  it("has in every language exactly the English keys, each with the same placeholders (the catalogue test)", () => {
    const english = shape(STRINGS.en)
    for (const language of LANGUAGES) expect(shape(STRINGS[language]), language).toEqual(english)
    expect(fill(STRINGS.de.sendOnly, { asset: "USDC", network: "Base" })).toContain("nur USDC auf Base")
  })

  it("catches a missing key and a changed placeholder", () => {
    const broken = { ...STRINGS.fr, refund: { ...STRINGS.fr.refund, amountOn: "{montant} {asset} sur {network}" } }
    expect(shape(broken)).not.toEqual(shape(STRINGS.en))
    const { awaiting: _, ...missing } = STRINGS.ja
    expect(shape(missing)).not.toEqual(shape(STRINGS.en))
  })

  it("picks the language from Accept-Language by q-value, falling back from a region to its language", () => {
    expect(languageOf(undefined)).toBe("en")
    expect(languageOf("ja-JP,ja;q=0.9,en;q=0.8")).toBe("ja")
    expect(languageOf("nl;q=1, de-AT;q=0.7, fr;q=0.8")).toBe("fr")
    expect(languageOf("pt-PT")).toBe("pt-BR")
    expect(languageOf("pt")).toBe("pt-BR")
    expect(languageOf("zh-Hans-CN")).toBe("zh-CN")
    expect(languageOf("TR-tr")).toBe("tr")
    expect(languageOf("ru;q=0, it;q=0.1")).toBe("it")
    expect(languageOf("nl, *;q=0.5")).toBe("en")
    expect(supportedLanguage("pt-br")).toBe("pt-BR")
  })

  it("lets ?lang= override Accept-Language, and ignores an unknown one", () => {
    expect(pageLanguage("de", "ja")).toBe("de")
    expect(pageLanguage("zh-cn", "ja")).toBe("zh-CN")
    expect(pageLanguage("xx", "ja")).toBe("ja")
    expect(pageLanguage(null, "es-MX")).toBe("es")
  })

  it("marks the page with its language, keeps it from robots, describes it and offers the picker", () => {
    const html = render("ja")
    expect(html).toContain(`<html lang="ja">`)
    expect(html).toContain(`<meta name="robots" content="noindex, nofollow">`)
    expect(html).toContain(`<meta name="description" content="${STRINGS.ja.description}">`)
    expect(html).toContain(`<nav class="languages" aria-label="言語">`)
    for (const language of LANGUAGES) expect(html).toContain(`href="?lang=${language}" lang="${language}" hreflang="${language}"`)
    expect(html).toContain(`<a href="?lang=ja" lang="ja" hreflang="ja" aria-current="true">日本語</a>`)
  })

  it("formats amounts and dates with Intl in the page's locale, English as before", () => {
    expect(render("en")).toContain(`<p class="amount" aria-label="Amount due">$1,234.50</p>`)
    expect(render("en")).toContain(">2026-03-01 12:00 UTC</time>")
    expect(render("de")).toContain(`${new Intl.NumberFormat("de", { style: "currency", currency: "USD" }).format(1234.5)}</p>`)
    expect(render("de")).toContain("1.234,50")
    const germanDate = new Intl.DateTimeFormat("de", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(DEADLINE)
    expect(render("de")).toContain(`>${germanDate} UTC</time>`)
    expect(render("ja")).toContain("2026/03/01")
  })
})
