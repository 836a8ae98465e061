import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { build } from "esbuild"
import type { PageAssets } from "./PayPageView.ts"

/** Budgets of the page's script, checked by a test: what a payer on a phone downloads. */
export const SCRIPT_BUDGET_BYTES = 48 * 1024
export const SCRIPT_BUDGET_COMPRESSED_BYTES = 16 * 1024

export interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
}

export interface PayAssets {
  readonly names: PageAssets
  readonly byName: ReadonlyMap<string, Asset>
}

const hashed = (name: string, body: Uint8Array) => {
  const dot = name.lastIndexOf(".")
  return `${name.slice(0, dot)}.${createHash("sha256").update(body).digest("hex").slice(0, 12)}${name.slice(dot)}`
}

/** The page's browser script bundled and minified by esbuild (a second or less, once at start). */
export const bundleScript = async (): Promise<Uint8Array> => {
  const result = await build({
    entryPoints: [join(import.meta.dirname, "browser", "main.ts")],
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2020",
    platform: "browser",
    write: false,
    legalComments: "none",
    logLevel: "silent"
  })
  return result.outputFiles[0].contents
}

/** The script, style sheet and icon under content-hashed names (so they can be cached for good). */
export const loadPayAssets = async (): Promise<PayAssets> => {
  const directory = join(import.meta.dirname, "assets")
  const files: Array<[string, Uint8Array, string]> = [
    ["pay.js", await bundleScript(), "application/javascript; charset=utf-8"],
    ["pay.css", readFileSync(join(directory, "pay.css")), "text/css; charset=utf-8"],
    ["favicon.svg", readFileSync(join(directory, "favicon.svg")), "image/svg+xml"]
  ]
  const byName = new Map<string, Asset>()
  const names: Record<string, string> = {}
  for (const [name, body, contentType] of files) {
    const key = hashed(name, body)
    names[name] = key
    byName.set(key, { body, contentType })
  }
  return { names: { script: names["pay.js"], style: names["pay.css"], icon: names["favicon.svg"] }, byName }
}
