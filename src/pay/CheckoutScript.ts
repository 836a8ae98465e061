import { createHash } from "node:crypto"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { HttpServerResponse } from "effect/http"
import { bundleBrowserScript } from "../ops/StaticAssets.ts"

/** checkout.js must stay small for the shops that include it (issue #57), checked by a test. */
export const CHECKOUT_SCRIPT_BUDGET_COMPRESSED_BYTES = 6 * 1024

export interface CheckoutScript {
  readonly body: Uint8Array
  /** Its content's hash: the `v` of the URL shops pin (`/checkout.js?v=…`), with the integrity below. */
  readonly version: string
  /** The Subresource Integrity value of these bytes (`sha384-…`). */
  readonly integrity: string
  readonly gzipBytes: number
}

/** checkout.js as served: a classic script (so that shops can load it with `integrity` and read `document.currentScript`). */
export const loadCheckoutScript = async (): Promise<CheckoutScript> => {
  const body = await bundleBrowserScript(join(import.meta.dirname, "embed", "checkout.ts"), "iife")
  return {
    body,
    version: createHash("sha256").update(body).digest("hex").slice(0, 12),
    integrity: `sha384-${createHash("sha384").update(body).digest("base64")}`,
    gzipBytes: gzipSync(body, { level: 9 }).length
  }
}

/**
 * `GET /checkout.js`: cached for a year when asked for by its current version (`?v=`), for five
 * minutes otherwise; readable from any origin (a cross-origin script with `integrity` is fetched with CORS).
 */
export const checkoutScriptResponse = (script: CheckoutScript, requestedVersion: string | null) =>
  HttpServerResponse.uint8Array(script.body, {
    contentType: "application/javascript; charset=utf-8",
    headers: {
      "cache-control": requestedVersion === script.version ? "public, max-age=31536000, immutable" : "public, max-age=300",
      "access-control-allow-origin": "*",
      "cross-origin-resource-policy": "cross-origin",
      "x-content-type-options": "nosniff"
    }
  })
