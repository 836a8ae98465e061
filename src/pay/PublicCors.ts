import { Effect } from "effect"
import { HttpMiddleware, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { PublicRefundsGroup } from "../refunds/RefundsApi.ts"
import { PublicGroup } from "./PublicApi.ts"

/** The path every endpoint of the given groups starts with, up to its first parameter. */
const commonPrefix = (paths: ReadonlyArray<string>) =>
  paths.map((path) => path.slice(0, path.indexOf("/:") + 1 || path.length)).reduce((prefix, path) => {
    let length = 0
    while (length < prefix.length && prefix[length] === path[length]) length++
    return prefix.slice(0, length)
  })

/** Where the public groups' endpoints live (`/api/checkout/pay/`), read from the groups themselves. */
export const PUBLIC_PREFIX = commonPrefix([PublicGroup, PublicRefundsGroup].flatMap((group) => Object.values(group.endpoints).map((endpoint) => endpoint.path)))

const cors = HttpMiddleware.cors({ allowedMethods: ["GET", "POST", "OPTIONS"], allowedHeaders: ["content-type"], maxAge: 600 })

/**
 * CORS of the public payment groups (issue #54 item 3): they are called from the hosted page and
 * from merchants' own payment UIs in browsers, so any origin, no credentials (they take none), and
 * the preflight answered here. A router middleware rather than one on the groups: a preflight
 * (OPTIONS) matches no endpoint, and the groups' error answers are encoded after their middlewares.
 */
export const publicCors = <E, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => request.url.startsWith(PUBLIC_PREFIX) ? cors(httpEffect) : httpEffect)
