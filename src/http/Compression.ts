import { promisify } from "node:util"
import { brotliCompress, constants, gzip } from "node:zlib"
import { Effect } from "effect"
import { HttpBody, HttpServerRequest, HttpServerResponse } from "effect/http"

const MIN_BYTES = 1_024
const COMPRESSIBLE = /^(application\/json|text\/|image\/svg\+xml|application\/javascript)/
const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

/** The encoding to answer with: brotli, else gzip, when the client accepts it (q=0 refuses). */
export const chooseEncoding = (acceptEncoding: string | undefined): "br" | "gzip" | undefined => {
  if (acceptEncoding === undefined) return undefined
  const accepted = new Map(acceptEncoding.split(",").map((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    const q = params.map((param) => param.trim()).find((param) => param.startsWith("q="))
    return [name, q === undefined ? 1 : Number(q.slice(2))] as const
  }))
  const allowed = (name: string) => (accepted.get(name) ?? accepted.get("*") ?? 0) > 0
  return allowed("br") ? "br" : allowed("gzip") ? "gzip" : undefined
}

/**
 * Compresses a response's body (JSON, HTML, SVG, scripts over 1 KiB) when the client accepts
 * brotli or gzip: an invoice with its QR codes is about 20 kB, a few kB compressed, and a payer's
 * page polls its status. zlib runs on libuv's thread pool, off the event loop; brotli at quality 4
 * costs about what gzip does and compresses these bodies better.
 */
export const compressResponse = <E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const encoding = chooseEncoding(request.headers["accept-encoding"])
    if (encoding === undefined) return httpEffect
    return Effect.flatMap(httpEffect, (response) => {
      const body = response.body
      if (body._tag !== "Uint8Array" || body.body.length < MIN_BYTES || response.headers["content-encoding"] !== undefined) return Effect.succeed(response)
      if (!COMPRESSIBLE.test(body.contentType)) return Effect.succeed(response)
      return Effect.promise(() =>
        encoding === "br"
          ? brotli(body.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.body.length } })
          : gzipped(body.body, { level: 6 })
      ).pipe(Effect.map((compressed) =>
        response.pipe(
          HttpServerResponse.setBody(HttpBody.uint8Array(compressed, body.contentType)),
          HttpServerResponse.setHeader("content-encoding", encoding),
          HttpServerResponse.setHeader("vary", response.headers["vary"] === undefined ? "accept-encoding" : `${response.headers["vary"]}, accept-encoding`)
        )
      ))
    })
  })
