import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Cause, Effect, Layer } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { compressResponse } from "./http/Compression.ts"
import { databaseUnavailable, DatabaseGateLive, RETRY_AFTER_SECONDS, withRetryAfter } from "./http/DatabaseGate.ts"
import { requestLimits } from "./http/RequestLimits.ts"
import { publicCors } from "./pay/PublicCors.ts"
import { PayPageRoutesLive } from "./pay/PayPageHttp.ts"
import { DashboardRoutesLive } from "./dashboard/DashboardHttp.ts"
import { type HttpApi, HttpApiBuilder, type HttpApiGroup, HttpApiScalar, OpenApi } from "effect/http-api"
import { IpNetwork } from "effect/net"
import { createServer } from "node:http"
import { AppConfig, withBoundPort } from "./config/AppConfig.ts"
import { isConnectionFailure } from "./db/ConnectionFailure.ts"
import { DatabaseAvailability } from "./db/DatabaseAvailability.ts"
import { DashboardInvoicesHttpLive } from "./dashboard/DashboardInvoicesHttp.ts"
import { DevSimulatorHttpLive } from "./simulator/DevSimulatorHttp.ts"
import { MerchantHttpLive } from "./invoices/InvoicesHttp.ts"
import { TestHelpersHttpLive } from "./testmode/TestHelpersHttp.ts"
import { PublicHttpLive } from "./pay/PublicHttp.ts"
import { CheckoutSettingsHttpLive } from "./payments/CheckoutSettingsHttp.ts"
import { UnmatchedDepositsHttpLive } from "./deposits/UnmatchedDepositsHttp.ts"
import { HealthHttpLive } from "./ops/HealthHttp.ts"
import { ChainWatchersHttpLive } from "./ops/ChainWatchersHttp.ts"
import { measureRequests, RouteTemplateLabel } from "./observability/HttpMetrics.ts"
import { MetricsRouteLive } from "./ops/MetricsHttp.ts"
import { SweepsHttpLive } from "./sweeps/SweepsHttp.ts"
import { WebhooksHttpLive } from "./webhooks/WebhooksHttp.ts"
import { DashboardRefundsHttpLive, PublicRefundsHttpLive } from "./refunds/RefundsHttp.ts"
import { Api, ProductionApi } from "./Api.ts"
import { AuthHttpLive, KeysHttpLive } from "./accounts/AccountsHttp.ts"
import { DashboardAuthenticationLive, MerchantAuthenticationLive } from "./accounts/AuthenticationHttp.ts"
import { SchemaErrorsLive } from "./http/ValidationErrors.ts"
import { DemoMerchantLive } from "./demo/DemoMerchant.ts"
import { serviceUrl } from "./demo/ServiceUrl.ts"
import { TransportAnswers, transportResponse } from "./http/ApiErrors.ts"

/** Every 503 says when to retry: the routes' own (account status, Solana preparation, ...) carry none themselves. */
const saysWhenToRetry = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 503 && response.headers["retry-after"] === undefined
    ? HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))
    : response

/**
 * The `{error}` answers of what no route answered: unknown routes (404, or 403 for an API key
 * outside the checkout endpoints), unreadable or oversized bodies, wrong content types (415 as the
 * spec's 400), a lost database (503, and it is reported unavailable) and anything else (a 500 that
 * never leaks internals).
 */
const answerFailures =
  (maxBodyBytes: number, unavailable: Effect.Effect<HttpServerResponse.HttpServerResponse>) => <E, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    httpEffect.pipe(
      Effect.map((response) => response.status === 415 ? transportResponse(TransportAnswers.notJson) : saysWhenToRetry(response)),
      Effect.catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
        const error = Cause.squash(cause)
        if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound") {
          return HttpServerRequest.HttpServerRequest.pipe(
            Effect.map((request) => transportResponse(request.headers["x-api-key"] !== undefined ? TransportAnswers.apiKeyOutsideCheckout : TransportAnswers.notFound))
          )
        }
        if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RequestParseError") {
          return Effect.succeed(transportResponse(error.reason.reason === "BodyTooLarge" ? TransportAnswers.bodyTooLarge(maxBodyBytes) : TransportAnswers.unreadableBody))
        }
        // Only a failure to reach the database makes it unavailable for everyone; a statement
        // that fails (22P02: malformed input that slipped past validation) is this request's 500.
        if (isConnectionFailure(error)) return Effect.logWarning("Database failure", cause).pipe(Effect.andThen(unavailable))
        return Effect.logError("Unhandled failure", cause).pipe(Effect.as(transportResponse(TransportAnswers.internal)))
      })
    )

/**
 * The router's boundary, named pieces from the outside in: the HTTP metrics (the final answer),
 * compression, the failure answers, the public groups' CORS, the client address behind trusted
 * proxies, and the request limits (hostile input, body cap, time-out). The database gate is
 * declared by the groups (DatabaseGate.ts) and the development group is not mounted in production
 * (Routes). One global middleware, so that the order above never depends on the order in which
 * global middleware layers are built.
 */
const Boundary = Layer.unwrap(Effect.gen(function*() {
  const { maxBodyBytes, trustedProxies, requestTimeoutMs } = yield* AppConfig
  const database = yield* DatabaseAvailability
  const unavailable = Effect.as(database.reportFailure, databaseUnavailable())
  // The database is suspected (the probe clears that within a second if wrong), but not named.
  const timedOut = Effect.as(database.reportFailure, withRetryAfter(TransportAnswers.timedOut(RETRY_AFTER_SECONDS)))
  const networks = trustedProxies.map((entry) => IpNetwork.fromStringUnsafe(entry.includes("/") ? entry : `${entry}/${entry.includes(":") ? 128 : 32}`))
  const clientAddress = networks.length === 0 ? <A>(self: A) => self : HttpMiddleware.xForwardedHeaders({ trustedProxies: networks })
  const limits = requestLimits({ maxBodyBytes, requestTimeoutMs, timedOut })
  const failures = answerFailures(maxBodyBytes, unavailable)
  return HttpRouter.middleware((httpEffect) => measureRequests(compressResponse(failures(publicCors(clientAddress(limits(httpEffect)))))), { global: true })
})).pipe(Layer.provide(DatabaseAvailability.layer))

/** `GET /`: a newcomer who opens the service's address lands on the API docs. */
const RootRedirect = HttpRouter.add("GET", "/", HttpServerResponse.redirect("/docs"))

/** The API as this instance documents it: its public URL is the document's server. */
const servedApi = <Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<"checkout", Groups>, publicUrl: string) =>
  api.annotate(OpenApi.Servers, [{ url: publicUrl, description: "This checkout service" }])

/** The routes of one API: its endpoints, its OpenAPI document and its docs page. */
const apiRoutes = <Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<"checkout", Groups>, publicUrl: string) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(servedApi(api, publicUrl), { openapiPath: "/api/openapi.json" }),
    // The docs page loads nothing from outside the service (Scalar's default fonts come from its CDN),
    // and its document names no server, so that "try it" sends to the origin the page came from.
    HttpApiScalar.layer(api, { path: "/docs", scalar: { withDefaultFonts: false } })
  )

/** Every route of the service; each is labelled with its route template for the HTTP metrics. In production, no development simulator. */
const Routes = Layer.unwrap(Effect.map(AppConfig, ({ publicUrl, env }) =>
  Layer.mergeAll(
    env === "production" ? apiRoutes(ProductionApi, publicUrl) : apiRoutes(Api, publicUrl),
    MetricsRouteLive,
    PayPageRoutesLive,
    DashboardRoutesLive,
    RootRedirect
  ))).pipe(Layer.provide(RouteTemplateLabel))

export const HttpAppLive = Layer.mergeAll(Routes, Boundary).pipe(
  Layer.provide([
    MerchantHttpLive,
    TestHelpersHttpLive,
    PublicHttpLive,
    AuthHttpLive,
    KeysHttpLive,
    DashboardInvoicesHttpLive,
    DevSimulatorHttpLive,
    CheckoutSettingsHttpLive,
    WebhooksHttpLive,
    HealthHttpLive,
    ChainWatchersHttpLive,
    UnmatchedDepositsHttpLive,
    SweepsHttpLive,
    PublicRefundsHttpLive,
    DashboardRefundsHttpLive
  ]),
  Layer.provide([MerchantAuthenticationLive, DashboardAuthenticationLive, SchemaErrorsLive, DatabaseGateLive])
)

/**
 * The port opens before the routes are attached (the server layer is built first). A request that
 * arrives in between had no listener and was never answered (a restarted instance hung the
 * requests a load balancer sent it while it started): it is answered 503 until the routes attach.
 */
export const createServerAnsweringWhileStarting = () => {
  const server = createServer()
  // A listen error (a port in use) fails the serve layer; without a listener Node would also throw it.
  server.on("error", () => {})
  server.on("request", (_request, response) => {
    if (server.listenerCount("request") > 1) return // the service's handler answers
    response.writeHead(TransportAnswers.starting.status, { "content-type": "application/json", "retry-after": "1" })
    response.end(JSON.stringify({ error: TransportAnswers.starting.error }))
  })
  return server
}

/** The configuration as the listening server sees it: PORT=0's bound port (see withBoundPort). */
export const BoundAppConfig = Layer.effect(
  AppConfig,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const { address } = yield* HttpServer.HttpServer
    return "port" in address ? withBoundPort(config, address.port) : config
  })
)

/** The listening HTTP server; `HttpServer.HttpServer` stays visible for tests (bound port). */
export const HttpServerLive = Layer.unwrap(Effect.gen(function*() {
  const { host, port } = yield* AppConfig
  return HttpRouter.serve(HttpAppLive.pipe(Layer.provide(BoundAppConfig)), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServerAnsweringWhileStarting, { port, host }))
  )
}))

/** Every start with a server says where it listens and on what (the demo banner adds its own lines). */
const ListeningAnnouncement = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const { address } = yield* HttpServer.HttpServer
  const listening = "port" in address ? serviceUrl({ host: config.host, port: address.port }) : address.path
  const database = config.databaseUrl === undefined ? `the embedded database in ${config.dataDir}` : `PostgreSQL at ${new URL(config.databaseUrl).host}`
  yield* Effect.logInfo(`Checkout service listening on ${listening} (public URL ${config.publicUrl}, ${config.env}, role ${config.role}, ${database})`)
}))

/** The HTTP server and demo data, unless this process runs workers only (CHECKOUT_ROLE=workers). */
export const ApiLive = Layer.unwrap(
  Effect.map(AppConfig,
    ({ role }) =>
      role === "workers" ? Layer.empty : Layer.mergeAll(DemoMerchantLive, ListeningAnnouncement).pipe(Layer.provide(BoundAppConfig), Layer.provideMerge(HttpServerLive)))
)
