import type { ChainWatchSettings } from "../config/AppConfig.ts"
import { isEvm, NETWORKS } from "./Networks.ts"

/**
 * The networks this deployment watches: those with an endpoint and a watcher implementation.
 * Only these hold back invoice expiry; the others are fed by the simulator alone.
 */
export const watchedNetworks = (settings: ChainWatchSettings): ReadonlyArray<string> =>
  NETWORKS.filter((network) => (isEvm(network) || network === "bitcoin" || network === "solana") && settings.endpoints[network] !== undefined)
