import { lookup } from "node:dns/promises"
import { Context, Layer } from "effect"
import type { buildConnector } from "undici"
import type { Resolver } from "./Destination.ts"

export const WEBHOOK_TIMEOUT_MS = 10_000

let undici: Promise<typeof import("undici")> | undefined

/**
 * undici (about 20 MB resident: it loads its whole client, fetch and WebSocket included) is loaded
 * on the first webhook attempt rather than at start (docs/decisions.md, Footprint).
 */
export const loadUndici = () => (undici ??= import("undici"))

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
  static readonly system = Layer.sync(WebhookConnector, () => {
    let dial: buildConnector.connector | undefined
    const connect: buildConnector.connector = (options, callback) => {
      if (dial !== undefined) return dial(options, callback)
      loadUndici().then(({ buildConnector }) => {
        dial ??= buildConnector({ timeout: WEBHOOK_TIMEOUT_MS, allowH2: false })
        dial(options, callback)
      }, (error: Error) => callback(error, null))
    }
    return { connect }
  })
}
