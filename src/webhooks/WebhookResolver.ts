import { lookup } from "node:dns/promises"
import { Context, Layer } from "effect"
import type { Resolver } from "./Destination.ts"

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }))

/** DNS for webhook destinations; tests inject their own answers. */
export class WebhookResolver extends Context.Service<WebhookResolver, { readonly resolve: Resolver }>()("Webhooks/Resolver") {
  static readonly system = Layer.succeed(WebhookResolver, { resolve: systemResolver })
}
