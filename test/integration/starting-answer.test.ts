import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpServer, HttpServerResponse } from "effect/http"
import { createServerAnsweringWhileStarting } from "../../src/Http.ts"

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.text() }
  })

describe("decisions.md: between the port opening and the routes attaching", () => {
  // HttpServerLive's server: NodeHttpServer listens when its layer is built, and the routes attach later, with `serve`.
  it.effect("requests get 503 `The service is starting; retry after 1 second` with Retry-After: 1, then the routes answer", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(NodeHttpServer.layer(createServerAnsweringWhileStarting, { port: 0, host: "127.0.0.1" }))
      const server = Context.get(context, HttpServer.HttpServer)
      const address = server.address
      if (!("port" in address)) return expect.unreachable("a TCP address")
      const url = `http://127.0.0.1:${address.port}/api/health`
      expect(yield* get(url)).toEqual({ status: 503, retryAfter: "1", body: JSON.stringify({ error: "The service is starting; retry after 1 second" }) })
      yield* server.serve(Effect.succeed(HttpServerResponse.text("attached")))
      expect(yield* get(url)).toEqual({ status: 200, retryAfter: null, body: "attached" })
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
