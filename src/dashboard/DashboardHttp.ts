import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { AppConfig } from "../config/AppConfig.ts"
import { assetResponse, bundleBrowserScript, hashAssets } from "../ops/StaticAssets.ts"
import { type Explorers, explorersOf } from "../pay/Explorers.ts"
import { layoutLifecycle } from "./LifecycleChart.ts"

/**
 * The dashboard's script (bundled by esbuild at start), style sheet and the lifecycle statechart's
 * layout (elkjs, from the machine, at start), under content-hashed names.
 */
const loadAssets = async () => {
  const [script, charts] = await Promise.all([bundleBrowserScript(join(import.meta.dirname, "browser", "main.ts")), layoutLifecycle()])
  return hashAssets([
    ["dashboard.js", script, "application/javascript; charset=utf-8"],
    ["dashboard.css", readFileSync(join(import.meta.dirname, "assets", "dashboard.css")), "text/css; charset=utf-8"],
    ["lifecycle.json", new TextEncoder().encode(JSON.stringify(charts)), "application/json"]
  ])
}

/** Same origin only; no inline script or style; forms post to the service only; never framed. */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
} as const

const escapeAttribute = (text: string) => text.replaceAll("&", "&amp;").replaceAll("\"", "&quot;").replaceAll("<", "&lt;")

/** The page; `explorers` (the payer page's, per network) links transaction hashes to the network's explorer. */
const shell = (names: Record<string, string>, explorers: Explorers) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Checkout dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/${names["dashboard.css"]}">
<script type="module" src="/dashboard/assets/${names["dashboard.js"]}"></script>
</head>
<body data-lifecycle="/dashboard/assets/${names["lifecycle.json"]}" data-explorers="${escapeAttribute(JSON.stringify(explorers))}">
<header>
<span class="brand">Checkout dashboard</span>
<nav id="nav" aria-label="Dashboard" hidden>
<a href="#/overview">Overview</a>
<a href="#/invoices">Invoices</a>
<a href="#/exceptions">Exceptions</a>
<a href="#/refunds">Refunds</a>
<a href="#/keys">API keys</a>
<a href="#/settings">Checkout settings</a>
<a href="#/webhooks">Webhooks</a>
<a href="#/lifecycle">Lifecycle</a>
<a href="#/chain-watchers">Chain watchers</a>
<label class="mode-switch"><input type="checkbox" role="switch" id="test-data"> Viewing test data</label>
<button type="button" id="logout">Log out</button>
</nav>
</header>
<p id="test-banner" class="test-banner" role="status" hidden><strong>Test data.</strong> You are viewing test mode: test invoices, payments, refunds and settings, made with test API keys. Nothing here is real money, and live data is hidden until you turn off “Viewing test data”.</p>
<main id="app" aria-live="polite"><noscript><p>The dashboard needs JavaScript; the API is documented at <a href="/docs">/docs</a>.</p></noscript></main>
</body>
</html>
`

/** `GET /dashboard`: the merchant dashboard (one page; its views are hash routes) and its assets. */
export const DashboardRoutesLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const assets = yield* Effect.promise(() => loadAssets())
    const page = shell(assets.names, explorersOf((yield* AppConfig).explorerUrls))
    const html = Effect.sync(() => HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8", headers: SECURITY_HEADERS }))
    yield* router.add("GET", "/dashboard", html)
    yield* router.add("GET", "/dashboard/assets/:file",
      Effect.map(HttpRouter.params, (params) => assetResponse(params.file === undefined ? undefined : assets.byName.get(params.file))))
  })
)
