import { createHash } from "node:crypto"
import { HttpServerResponse } from "effect/http"
import { build } from "esbuild"

/** A file a page serves itself: its bytes and content type. */
export interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
}

/** A browser script bundled and minified by esbuild (a second or less, once at start). */
export const bundleBrowserScript = async (entryPoint: string, format: "esm" | "iife" = "esm"): Promise<Uint8Array> => {
  const result = await build({
    entryPoints: [entryPoint],
    bundle: true,
    minify: true,
    format,
    target: "es2020",
    platform: "browser",
    write: false,
    legalComments: "none",
    logLevel: "silent"
  })
  return result.outputFiles[0].contents
}

const hashed = (name: string, body: Uint8Array) => {
  const dot = name.lastIndexOf(".")
  return `${name.slice(0, dot)}.${createHash("sha256").update(body).digest("hex").slice(0, 12)}${name.slice(dot)}`
}

/**
 * Files under content-hashed names, so that they can be cached for good: `names` maps each
 * file's plain name to its hashed one, `byName` the hashed name to the file.
 */
export const hashAssets = (files: ReadonlyArray<readonly [name: string, body: Uint8Array, contentType: string]>) => {
  const byName = new Map<string, Asset>()
  const names: Record<string, string> = {}
  for (const [name, body, contentType] of files) {
    names[name] = hashed(name, body)
    byName.set(names[name], { body, contentType })
  }
  return { names, byName: byName as ReadonlyMap<string, Asset> }
}

/** A hashed asset, cached for a year (its name changes with its content), or a plain 404. */
export const assetResponse = (asset: Asset | undefined) =>
  asset === undefined
    ? HttpServerResponse.text("Not found", { status: 404, headers: { "x-content-type-options": "nosniff" } })
    : HttpServerResponse.uint8Array(asset.body, {
      contentType: asset.contentType,
      headers: { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }
    })
