import { Clock, Context, Effect } from "effect"
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { recordHttpRequest } from "./Metrics.ts"

/** The `route` label of a request that matched no route. */
export const UNMATCHED_ROUTE = "unmatched"

/** The `status` label of a request whose client went away (or whose server stopped) before an answer. */
const INTERRUPTED_STATUS = 499

interface RouteSlot {
  path: string
}

/**
 * Where the route-level half of the HTTP metrics leaves the matched route's template for the
 * global half. Only the router knows the match, and it tells only the route's own middleware
 * (`HttpRouter.RouteContext`); global middleware wraps the router before matching.
 */
const MatchedRoute = Context.Reference<RouteSlot | undefined>("Observability/MatchedRoute", { defaultValue: () => undefined })

/**
 * Route middleware: names the request's route template (`/api/checkout/invoices/:id`, never the
 * raw URL) for {@link measureRequests}. Provide it to every layer that registers routes.
 */
export const RouteTemplateLabel = HttpRouter.middleware((httpEffect) =>
  Effect.withFiber((fiber) => {
    const slot = fiber.getRef(MatchedRoute)
    if (slot !== undefined) slot.path = Context.getUnsafe(fiber.context, HttpRouter.RouteContext).route.path
    return httpEffect
  })
).layer

/**
 * Global middleware body: times `respond` (the router with every failure already turned into a
 * response) and records `http_requests_total{method,route,status}` and
 * `http_request_duration_seconds{method,route}`.
 */
export const measureRequests = <E, R>(
  respond: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.withFiber((fiber) => {
    const { method } = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.monotonicTimeNanosUnsafe()
    const slot: RouteSlot = { path: UNMATCHED_ROUTE }
    return respond.pipe(
      Effect.provideService(MatchedRoute, slot),
      Effect.onExit((exit) =>
        recordHttpRequest(
          method,
          slot.path,
          exit._tag === "Success" ? exit.value.status : INTERRUPTED_STATUS,
          Number(clock.monotonicTimeNanosUnsafe() - start) / 1e9
        )
      )
    )
  })
