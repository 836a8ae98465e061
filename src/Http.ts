import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { ByteSize, Cause, Duration, Effect, Layer } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { compressResponse } from "./http/Compression.ts"
import { charsetProblem, jsonBodyBytesProblem, urlProblem } from "./http/HostileInput.ts"
import { PayPageRoutesLive } from "./pay/PayPageHttp.ts"
import { DashboardRoutesLive } from "./dashboard/DashboardHttp.ts"
import { HttpIncomingMessage } from "effect/http"
import { HttpApiBuilder, HttpApiScalar, OpenApi } from "effect/http-api"
import { IpNetwork } from "effect/net"
import { createServer } from "node:http"
import { AppConfig, withBoundPort } from "./config/AppConfig.ts"
import { isConnectionFailure } from "./db/ConnectionFailure.ts"
import { DatabaseAvailability } from "./db/DatabaseAvailability.ts"
import { DashboardInvoicesHttpLive } from "./dashboard/DashboardInvoicesHttp.ts"
import { DevSimulatorHttpLive } from "./chains/DevSimulatorHttp.ts"
import { MerchantHttpLive } from "./invoices/InvoicesHttp.ts"
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
import { Api } from "./Api.ts"
import { AuthHttpLive, KeysHttpLive } from "./accounts/AccountsHttp.ts"
import { DashboardAuthenticationLive, MerchantAuthenticationLive } from "./accounts/AuthenticationHttp.ts"
import { SchemaErrorsLive } from "./http/SchemaErrors.ts"
import { DemoMerchantLive } from "./demo/DemoMerchant.ts"
import { serviceUrl } from "./demo/ServiceUrl.ts"
import { TransportAnswers, transportResponse } from "./http/RequestErrors.ts"

/**
 * The public payment page endpoints are called from the hosted page and from merchants' own
 * payment UIs in browsers: any origin, no credentials (they take none), preflight answered here.
 */
const PUBLIC_PREFIX = "/api/checkout/pay/"
const publicCors = HttpMiddleware.cors({ allowedMethods: ["GET", "POST", "OPTIONS"], allowedHeaders: ["content-type"], maxAge: 600 })

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * Refuses, before any route decodes it, input no route can take (see HostileInput.ts). The body
 * read here is the one the route reads afterwards (the platform caches it), under the same cap.
 */
const refuseHostileInput = <E, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const inUrl = urlProblem(request.url)
    if (inUrl !== undefined) return Effect.succeed(transportResponse(TransportAnswers.hostileInput(inUrl)))
    if (!BODY_METHODS.has(request.method)) return httpEffect
    const contentType = request.headers["content-type"]
    const inCharset = charsetProblem(contentType)
    if (inCharset !== undefined) return Effect.succeed(transportResponse(TransportAnswers.hostileInput(inCharset)))
    if (contentType !== undefined && !contentType.toLowerCase().includes("json")) return httpEffect
    // The bytes, not `text`: that decodes leniently. The route's own read decodes the same cached bytes.
    return Effect.flatMap(request.arrayBuffer, (bytes) => {
      const inBody = jsonBodyBytesProblem(new Uint8Array(bytes))
      return inBody === undefined ? httpEffect : Effect.succeed(transportResponse(TransportAnswers.hostileInput(inBody)))
    })
  })

const RETRY_AFTER_SECONDS = 5
const withRetryAfter = (answer: { readonly status: number; readonly error: string }) =>
  HttpServerResponse.setHeader(transportResponse(answer), "retry-after", String(RETRY_AFTER_SECONDS))
const databaseUnavailable = () => withRetryAfter(TransportAnswers.databaseUnavailable(RETRY_AFTER_SECONDS))

/** Every 503 says when to retry: the routes' own (account status, Solana preparation, ...) carry none themselves. */
const saysWhenToRetry = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 503 && response.headers["retry-after"] === undefined
    ? HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))
    : response

/** Routes that answer without the database: liveness, metrics, the API docs and the payment page's static assets. */
const WITHOUT_DATABASE = /^\/(?:api\/health(?:[?#]|$)|metrics(?:[?#]|$)|docs|api\/openapi\.json|pay\/assets\/|dashboard(?:\/(?:assets\/.*)?)?(?:[?#]|$)|$)/
const needsDatabase = (url: string) => !WITHOUT_DATABASE.test(url)

interface ServerErrorLike {
  readonly _tag?: string
  readonly reason?: { readonly _tag?: string; readonly reason?: string }
}

/**
 * Router-wide behaviour: the development simulator hidden in production, CORS of the public payment page endpoints, the request body cap, `{error}` bodies for unknown routes, unreadable
 * or oversized bodies and wrong content types, and a 500 that never leaks internals. Outermost, the HTTP metrics measure the final answer.
 * One global middleware, so that nothing depends on the order in which global middleware layers are built.
 */
const ErrorBoundary = Layer.unwrap(Effect.gen(function*() {
  const { maxBodyBytes, env, trustedProxies, requestTimeoutMs } = yield* AppConfig
  const database = yield* DatabaseAvailability
  const unavailable = Effect.as(database.reportFailure, databaseUnavailable())
  // The database is suspected (the probe clears that within a second if wrong), but not named.
  const timedOut = Effect.as(database.reportFailure, withRetryAfter(TransportAnswers.timedOut(RETRY_AFTER_SECONDS)))
  const networks = trustedProxies.map((entry) => IpNetwork.fromStringUnsafe(entry.includes("/") ? entry : `${entry}/${entry.includes(":") ? 128 : 32}`))
  const clientAddress = networks.length === 0
    ? <A>(self: A) => self
    : HttpMiddleware.xForwardedHeaders({ trustedProxies: networks })
  return HttpRouter.middleware(
    (httpEffect) =>
      measureRequests(compressResponse(Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        env === "production" && request.url.startsWith("/api/dev/")
          ? Effect.succeed(transportResponse(TransportAnswers.notFound))
          : !database.available() && needsDatabase(request.url)
          ? Effect.succeed(databaseUnavailable())
          : request.url.startsWith(PUBLIC_PREFIX)
          ? publicCors(refuseHostileInput(httpEffect))
          : refuseHostileInput(httpEffect)).pipe(
          clientAddress,
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
          // A request that cannot finish in its budget (a stalled database, most likely) gets a fast
          // 503 and reports the database as suspect; the probe clears that within a second if wrong.
          Effect.timeoutOrElse({ duration: Duration.millis(requestTimeoutMs), orElse: () => timedOut }),
          Effect.map((response) => response.status === 415 ? transportResponse(TransportAnswers.notJson) : saysWhenToRetry(response)),
          Effect.catchCause((cause) => {
            if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
            const error = Cause.squash(cause) as ServerErrorLike
            if (error?._tag === "HttpServerError" && error.reason?._tag === "RouteNotFound") {
              return HttpServerRequest.HttpServerRequest.pipe(Effect.map((request) =>
                request.headers["x-api-key"] !== undefined
                  ? transportResponse(TransportAnswers.apiKeyOutsideCheckout)
                  : transportResponse(TransportAnswers.notFound)
              ))
            }
            if (error?._tag === "HttpServerError" && error.reason?._tag === "RequestParseError") {
              return Effect.succeed(
                error.reason.reason === "BodyTooLarge"
                  ? transportResponse(TransportAnswers.bodyTooLarge(maxBodyBytes))
                  : transportResponse(TransportAnswers.unreadableBody)
              )
            }
            // Only a failure to reach the database makes it unavailable for everyone; a statement
            // that fails (22P02: malformed input that slipped past validation) is this request's 500.
            if (isConnectionFailure(error)) {
              return Effect.logWarning("Database failure", cause).pipe(Effect.andThen(unavailable))
            }
            return Effect.logError("Unhandled failure", cause).pipe(Effect.as(transportResponse(TransportAnswers.internal)))
          })
        ))),
    { global: true }
  )
})).pipe(Layer.provide(DatabaseAvailability.layer))

/** `GET /`: a newcomer who opens the service's address lands on the API docs. */
const RootRedirect = HttpRouter.add("GET", "/", HttpServerResponse.redirect("/docs"))

/** The API as this instance documents it: its public URL is the document's server. */
const servedApi = (publicUrl: string) => Api.annotate(OpenApi.Servers, [{ url: publicUrl, description: "This checkout service" }])

/** Every route of the service; each is labelled with its route template for the HTTP metrics. */
const Routes = Layer.unwrap(Effect.map(AppConfig, ({ publicUrl }) => {
  const api = servedApi(publicUrl)
  return Layer.mergeAll(
    HttpApiBuilder.layer(api, { openapiPath: "/api/openapi.json" }),
    // The docs page loads nothing from outside the service (Scalar's default fonts come from its CDN),
    // and its document names no server, so that "try it" sends to the origin the page came from.
    HttpApiScalar.layer(Api, { path: "/docs", scalar: { withDefaultFonts: false } }),
    MetricsRouteLive,
    PayPageRoutesLive,
    DashboardRoutesLive,
    RootRedirect
  )
})).pipe(Layer.provide(RouteTemplateLabel))

export const HttpAppLive = Layer.mergeAll(Routes, ErrorBoundary).pipe(
  Layer.provide([
    MerchantHttpLive,
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
  Layer.provide([MerchantAuthenticationLive, DashboardAuthenticationLive, SchemaErrorsLive])
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
