import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"

/**
 * The decoded parts (params, query, payload, headers) of the request a handler of endpoint `Id`
 * of `Group` receives: lets a handler's steps live in named functions beside the group instead of
 * inline. The raw request, endpoint and group are left out (the composed API adds middleware to them).
 */
export type HandlerRequest<Group, Id extends string> = Omit<
  HttpApiEndpoint.Request<HttpApiEndpoint.WithIdentifier<HttpApiGroup.Endpoints<Group>, Id>>,
  "request" | "endpoint" | "group"
>
