import { HttpApiMiddleware } from "effect/http-api"
import { CurrentMerchant } from "./CurrentMerchant.ts"
import { BadRequest, Forbidden, ServiceUnavailable, TooManyRequests, Unauthorized } from "./ApiErrors.ts"

/**
 * Authentication of the five merchant endpoints, in the spec's order: the `X-Api-Key` header,
 * then the `checkout_session` cookie, then `Authorization: Bearer`.
 */
export class MerchantAuthentication extends HttpApiMiddleware.Service<MerchantAuthentication, {
  provides: CurrentMerchant
}>()("Http/MerchantAuthentication", { error: [BadRequest, Unauthorized, Forbidden, TooManyRequests, ServiceUnavailable] }) {}
