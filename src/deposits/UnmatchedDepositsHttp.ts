import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { livemodeOf } from "../http/LivemodeQuery.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { UnmatchedDepositsGroup } from "./UnmatchedDepositsApi.ts"
import { mapDomainErrors, RequestErrors } from "../http/ApiErrors.ts"
import { UnmatchedDeposits } from "./UnmatchedDeposits.ts"

export const UnmatchedDepositsHttpLive = HttpApiBuilder.group(checkoutApi(UnmatchedDepositsGroup), "unmatchedDeposits", (handlers) =>
  Effect.gen(function*() {
    const deposits = yield* UnmatchedDeposits
    return handlers
      .handle("list", ({ query }) =>
        Effect.flatMap(CurrentMerchant, (merchant) =>
          deposits.page(merchant.merchantId, { livemode: livemodeOf(query), cursor: query.cursor, limit: query.limit === undefined ? undefined : Number(query.limit) }).pipe(
            Effect.catchTag("InvalidCursor", () =>
              Effect.fail(RequestErrors.invalidCursor()))
          )))
      .handle("forInvoice", ({ params }) => Effect.flatMap(CurrentMerchant, (merchant) => mapDomainErrors(deposits.forInvoice(merchant.merchantId, params.id))))
  })).pipe(Layer.provide(UnmatchedDeposits.layer))
