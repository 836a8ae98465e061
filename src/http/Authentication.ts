import { HttpApiMiddleware } from "effect/http-api"
import { CurrentMerchant } from "./CurrentMerchant.ts"
import { BadRequest, Forbidden, ServiceUnavailable, TooManyRequests, Unauthorized } from "./ApiErrors.ts"

/** The merchant endpoints' authentication is part of the contract (contract/Authentication.ts), shared with the SDK. */
export { MerchantAuthentication } from "../../contract/Authentication.ts"

/**
 * Dashboard routes: a session cookie or bearer JWT only. An API key is refused with 403 (keys
 * reach the five merchant endpoints and nothing else). Every request counts against its client
 * address's limit first, authenticated or not (a flood is refused before any session or key is
 * looked at), then against its account's.
 */
export class DashboardAuthentication extends HttpApiMiddleware.Service<DashboardAuthentication, {
  provides: CurrentMerchant
}>()("Http/DashboardAuthentication", { error: [BadRequest, Unauthorized, Forbidden, TooManyRequests, ServiceUnavailable] }) {}
