import type { NonEmptyReadonlyArray } from "effect/Array"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { SchemaErrors } from "./SchemaErrors.ts"

/**
 * The service's HttpApi over the given groups, with what every route shares: request decoding
 * failures as the spec's 400 and, for bodies only, unknown fields refused (`<field> is not a known
 * field`; headers, path and query keep the defaults). The service composes it (Api.ts) over
 * every group; a feature builds its handlers against its own groups, so that it never imports the
 * composition (the routes of a group depend only on the group and these settings).
 */
export const checkoutApi = <const Groups extends NonEmptyReadonlyArray<HttpApiGroup.Constraint>>(...groups: Groups) =>
  HttpApi.make("checkout")
    .add(...groups)
    .middleware(SchemaErrors)
    .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
