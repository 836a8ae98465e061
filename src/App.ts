import { Effect, Layer } from "effect"
import { ChainWatchers } from "./chains/ChainWatchers.ts"
import { InvoiceExpiry } from "./expiry/InvoiceExpiry.ts"
import { ForwarderSweeper } from "./chains/evm/ForwarderSweeper.ts"
import { AppConfig } from "./config/AppConfig.ts"
import { ApiLive } from "./Http.ts"
import { BitcoinAddressPool } from "./payments/BitcoinAddressPool.ts"
import { ServicesLive } from "./Services.ts"
import { WebhookDispatcher } from "./webhooks/WebhookDispatcher.ts"

export { ServicesLive }

/** Background workers, unless this process is API-only (CHECKOUT_ROLE=api); each brings its service. */
const Workers = Layer.unwrap(
  Effect.map(AppConfig,
    ({ role }) =>
      role === "api" ? Layer.empty : Layer.mergeAll(InvoiceExpiry.worker, BitcoinAddressPool.worker, WebhookDispatcher.worker, ChainWatchers.worker, ForwarderSweeper.worker))
)

/**
 * The whole application for a configuration: the API (unless CHECKOUT_ROLE=workers) and the
 * workers, over the services and the database. The services are built first, with the
 * configuration as given (the API's routes see the bound port), and the API and the workers find
 * them memoized.
 */
export const makeApp = (config: Layer.Layer<AppConfig>) =>
  Layer.mergeAll(ApiLive, Workers).pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(config)
  )
