import { readFileSync } from "node:fs"
import { join } from "node:path"
import { type Asset, bundleBrowserScript, hashAssets } from "../ops/StaticAssets.ts"
import type { PageAssets } from "./PayPageView.ts"

/** Budgets of the page's script, checked by a test: what a payer on a phone downloads. */
export const SCRIPT_BUDGET_BYTES = 48 * 1024
export const SCRIPT_BUDGET_COMPRESSED_BYTES = 17 * 1024 + 256

export interface PayAssets {
  readonly names: PageAssets
  readonly byName: ReadonlyMap<string, Asset>
}

/** The page's browser script, bundled as it is served. */
export const bundleScript = () => bundleBrowserScript(join(import.meta.dirname, "browser", "main.ts"))

/** The script, style sheet and icon under content-hashed names (so they can be cached for good). */
export const loadPayAssets = async (): Promise<PayAssets> => {
  const directory = join(import.meta.dirname, "assets")
  const { names, byName } = hashAssets([
    ["pay.js", await bundleScript(), "application/javascript; charset=utf-8"],
    ["pay.css", readFileSync(join(directory, "pay.css")), "text/css; charset=utf-8"],
    ["favicon.svg", readFileSync(join(directory, "favicon.svg")), "image/svg+xml"]
  ])
  return { names: { script: names["pay.js"], style: names["pay.css"], icon: names["favicon.svg"] }, byName }
}
