import { Clock, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { DatabaseAvailability } from "../db/DatabaseAvailability.ts"
import { gatedOnDatabase } from "../http/DatabaseGate.ts"
import { frameAncestors } from "../payments/EmbedOrigins.ts"
import { assetResponse } from "../ops/StaticAssets.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { explorersOf } from "./Explorers.ts"
import { checkoutScriptResponse, loadCheckoutScript } from "./CheckoutScript.ts"
import { loadPayAssets } from "./PayAssets.ts"
import { PayPageData } from "./PayPageData.ts"
import { notFoundPage, payPage } from "./PayPageView.ts"
import { type Language, pageLanguage, STRINGS } from "./Strings.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Scripts and styles from this origin only, no inline script or style attribute, no plugin; the
 * page talks to its own API only (connect-src), and QR codes are inline SVG markup. Framed only by
 * the merchant's embed origins (none by default): `frameAncestors` gives the source list.
 */
export const pageSecurityHeaders = (frameAncestors = "'none'") => ({
  "content-security-policy":
    `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${frameAncestors}`,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
})

const html = (body: string, status: number, language: string, ancestors?: string) =>
  HttpServerResponse.text(body, {
    status,
    contentType: "text/html; charset=utf-8",
    // The page is the payer's alone: no search engine indexes it (the meta tag says the same).
    headers: { ...pageSecurityHeaders(ancestors), "content-language": language, vary: "accept-language", "x-robots-tag": "noindex, nofollow" }
  })

/** With a language chosen by `?lang=`, the option tabs keep it (they are plain links, for the page without its script). */
const keepChosenLanguage = (page: string, chosen: Language | undefined) => chosen === undefined ? page : page.replaceAll(`href="?option=`, `href="?lang=${chosen}&amp;option=`)

/** `GET /pay/:id` (the invoice's paymentUrl), its assets under content-hashed names, and the favicon. */
export const PayPageRoutesLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const pages = yield* PayPageData
    const assets = yield* Effect.promise(() => loadPayAssets())
    const explorers = explorersOf((yield* AppConfig).explorerUrls)
    // The page needs the database; its assets, the favicon and the checkout script do not.
    const gated = gatedOnDatabase(yield* DatabaseAvailability)

    const asset = (name: string | undefined) => assetResponse(name === undefined ? undefined : assets.byName.get(name))

    yield* router.add("GET", "/pay/assets/:file", Effect.map(HttpRouter.params, (params) => asset(params.file)))
    yield* router.add("GET", "/favicon.ico", Effect.sync(() => asset(assets.names.icon)))
    const checkoutScript = yield* Effect.promise(() => loadCheckoutScript())
    yield* router.add(
      "GET",
      "/checkout.js",
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => checkoutScriptResponse(checkoutScript, new URL(request.url, "http://localhost").searchParams.get("v")))
    )
    yield* router.add(
      "GET",
      "/pay/:id",
      gated(Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const id = (yield* HttpRouter.params).id ?? ""
        const query = new URL(request.url, "http://localhost").searchParams
        const language = pageLanguage(query.get("lang"), request.headers["accept-language"])
        const t = STRINGS[language]
        if (!UUID.test(id)) return html(notFoundPage(language, t, assets.names), 404, language)
        const selectedOptionId = query.get("option") ?? undefined
        const now = new Date(yield* Clock.currentTimeMillis)
        // The page (a test invoice says so at the top) and who may frame it.
        return yield* pages.find(id.toLowerCase()).pipe(
          Effect.map(({ embedOrigins: origins, parts }) =>
            html(
              keepChosenLanguage(
                payPage(parts, { language, t, assets: assets.names, now, selectedOptionId, explorers, test: !parts.invoice.livemode }),
                query.has("lang") ? language : undefined
              ),
              200,
              language,
              frameAncestors(origins)
            )
          ),
          Effect.catchTag("InvoiceNotFound", () => Effect.succeed(html(notFoundPage(language, t, assets.names), 404, language)))
        )
      }))
    )
  })
).pipe(Layer.provide([PayPageData.layer, DatabaseAvailability.layer]))
