import { de } from "./strings/de.ts"
import { type Catalogue, en } from "./strings/en.ts"
import { es } from "./strings/es.ts"
import { fr } from "./strings/fr.ts"
import { it } from "./strings/it.ts"
import { ja } from "./strings/ja.ts"
import { ptBR } from "./strings/pt-BR.ts"
import { ru } from "./strings/ru.ts"
import { tr } from "./strings/tr.ts"
import { zhCN } from "./strings/zh-CN.ts"

/**
 * Every text of the payment page, per language (BCP 47 tag, also the page's `lang` and the `Intl`
 * locale); English is the reference: the catalogue test holds the others to its keys and placeholders.
 */
export const STRINGS = { en, es, de, fr, "pt-BR": ptBR, it, tr, ja, "zh-CN": zhCN, ru } as const satisfies Record<string, Catalogue>

export type Language = keyof typeof STRINGS
export type Strings = Catalogue

export const LANGUAGES = Object.keys(STRINGS) as ReadonlyArray<Language>

/** Each language by its own name, for the picker (the same in every language). */
export const LANGUAGE_NAMES: Readonly<Record<Language, string>> = {
  en: "English",
  es: "Español",
  de: "Deutsch",
  fr: "Français",
  "pt-BR": "Português (Brasil)",
  it: "Italiano",
  tr: "Türkçe",
  ja: "日本語",
  "zh-CN": "简体中文",
  ru: "Русский"
}

/** A text with its `{name}` placeholders filled in. */
export const fill = (template: string, values: Readonly<Record<string, string>>) => template.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole)

/**
 * The supported language of one tag: the exact tag, else the one of its primary subtag (`pt-PT`
 * and `pt` read `pt-BR`, any `zh` reads Simplified Chinese, `de-AT` reads `de`).
 */
export const supportedLanguage = (tag: string): Language | undefined => {
  const lower = tag.trim().toLowerCase()
  const exact = LANGUAGES.find((language) => language.toLowerCase() === lower)
  if (exact !== undefined) return exact
  const primary = lower.split("-")[0]
  return LANGUAGES.find((language) => language.toLowerCase().split("-")[0] === primary)
}

/** The best supported language of an Accept-Language header (q-values honoured, region fallback); English by default. */
export const languageOf = (acceptLanguage: string | undefined): Language => {
  if (acceptLanguage === undefined) return "en"
  const ranked = acceptLanguage.split(",").map((part, index) => {
    const [tag, ...params] = part.trim().split(";")
    const q = params.map((param) => param.trim()).find((param) => param.startsWith("q="))
    return { tag, q: q === undefined ? 1 : Number(q.slice(2)), index }
  }).filter((entry) => entry.q > 0).sort((a, b) => b.q - a.q || a.index - b.index)
  for (const entry of ranked) {
    const language = supportedLanguage(entry.tag)
    if (language !== undefined) return language
  }
  return "en"
}

/** The page's language: `?lang=` when it names a supported one (the picker's choice), else Accept-Language. */
export const pageLanguage = (query: string | null, acceptLanguage: string | undefined): Language =>
  (query === null ? undefined : supportedLanguage(query)) ?? languageOf(acceptLanguage)
