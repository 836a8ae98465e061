import { lookup } from "node:dns/promises"
import { Context, Layer } from "effect"
import { buildConnector } from "undici"
import type { Resolver } from "./Destination.ts"

export const WEBHOOK_TIMEOUT_MS = 10_000

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }))

/** DNS for webhook destinations; tests inject their own answers. */
export class WebhookResolver extends Context.Service<WebhookResolver, { readonly resolve: Resolver }>()("Webhooks/Resolver") {
  static readonly system = Layer.succeed(WebhookResolver, { resolve: systemResolver })
}

/**
 * Opens the TCP (and TLS) connection to an address the sender has already checked. The sender
 * decides where to connect; this only dials. Tests dial local receivers with their own CA.
 */
export class WebhookConnector extends Context.Service<WebhookConnector, { readonly connect: buildConnector.connector }>()(
  "Webhooks/Connector"
) {
  static readonly system = Layer.sync(WebhookConnector, () => ({
    connect: buildConnector({ timeout: WEBHOOK_TIMEOUT_MS, allowH2: false })
  }))
}
