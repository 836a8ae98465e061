import { Context, Layer } from "effect"
import type { buildConnector } from "undici"

export const WEBHOOK_TIMEOUT_MS = 10_000

let undici: Promise<typeof import("undici")> | undefined

/**
 * undici (about 20 MB resident: it loads its whole client, fetch and WebSocket included) is loaded
 * on the first webhook attempt rather than at start (docs/decisions.md, Footprint).
 */
export const loadUndici = () => (undici ??= import("undici"))

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
