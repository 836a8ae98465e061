/** The service under test, as a child process: prints {port, apiKey, invoiceId} once it serves. */
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpServer } from "effect/http"
import { makeApp } from "../../src/App.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { seedMerchant } from "./seed.ts"

const config = {
  ...parseConfig({ ...process.env, PORT: "0", CHECKOUT_DEMO: "false", CHECKOUT_DATA_DIR: process.env.CHECKOUT_DATA_DIR ?? "memory://" }),
  apiRateLimitPerMinute: 100_000_000
}
const scope = Effect.runSync(Scope.make())
const context = await Effect.runPromise(Layer.buildWithScope(makeApp(Layer.succeed(AppConfig, config)), scope))
const address = Context.get(context as unknown as Context.Context<HttpServer.HttpServer>, HttpServer.HttpServer).address
const seeded = await Effect.runPromise(Effect.provide(seedMerchant, context))
console.log(JSON.stringify({ port: "port" in address ? address.port : 0, ...seeded }))
const stop = () => Effect.runPromise(Scope.close(scope, Exit.void)).finally(() => process.exit(0))
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
