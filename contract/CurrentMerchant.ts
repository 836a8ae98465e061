import { Context } from "effect"
import type { MerchantId } from "./Ids.ts"

/** The authenticated merchant of a request, provided by the authentication middleware. */
export class CurrentMerchant extends Context.Service<CurrentMerchant, {
  readonly merchantId: MerchantId
  readonly billingStatus: "active" | "blocked"
  readonly via: "api_key" | "session"
  /**
   * false for a test API key (issue #55): the request creates and sees test invoices only. Sessions
   * are live on the merchant endpoints (the dashboard API takes `livemode=false` for test data).
   */
  readonly livemode: boolean
  /**
   * The credential the request carried. Only an API key or a bearer token proves the caller meant
   * the request: a cookie rides along on any cross-site top-level GET (SameSite=Lax).
   */
  readonly credential: "api_key" | "bearer" | "cookie"
  /** The session of a cookie or bearer login (for logout); undefined for API keys. */
  readonly sessionId: string | undefined
}>()("Http/CurrentMerchant") {}
