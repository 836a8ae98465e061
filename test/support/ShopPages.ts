import { createServer, type Server } from "node:http"

/** A page served from a loopback origin of its own (a shop, or a frame that forges messages). */
export interface OriginServer {
  readonly origin: string
  readonly close: () => Promise<void>
}

/** Serves `html(url)` for every path on 127.0.0.1 at a free port: another origin than the service's. */
export const serveOrigin = (html: (url: URL) => string): Promise<OriginServer> =>
  new Promise((resolve) => {
    const server: Server = createServer((request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(html(new URL(request.url ?? "/", "http://127.0.0.1")))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({ origin: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(() => done())) })
    })
  })

/**
 * A shop's page that includes checkout.js (pinned by version and integrity) and shows the button
 * for `?pay=<paymentUrl>`; every `checkout-status` event lands in `window.seen`. `?frame=<url>`
 * adds a frame from elsewhere (a page that forges the checkout's messages); `?lang=` sets the page's language.
 */
export const shopPage = (script: { readonly src: string; readonly integrity: string }) => (url: URL) =>
  `<!doctype html>
<html lang="${url.searchParams.get("lang") ?? "en"}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Tea shop</title>
<script src="${script.src}" integrity="${script.integrity}" crossorigin="anonymous"></script></head>
<body><main><h1>Tea shop</h1><p>Tea set, 20.00 USD</p>
<checkout-invoicing-button payment-url="${url.searchParams.get("pay") ?? ""}">Pay with crypto</checkout-invoicing-button>
${url.searchParams.has("frame") ? `<iframe title="Advert" src="${url.searchParams.get("frame")}"></iframe>` : ""}
</main>
<script>window.seen = []; document.addEventListener("checkout-status", (event) => window.seen.push(event.detail))</script>
</body></html>`
