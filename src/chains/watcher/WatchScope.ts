/**
 * What one chain watcher watches: a network, for live invoices (its mainnet) or for test invoices
 * (its testnet, `livemode: false`). A testnet watcher runs beside the live one of the same network
 * and shares none of its state: its cursor, remembered blocks, leadership lock and metric label
 * use {@link stateKey}, and the evidence it reads back (confirmations, reorgs, mempool,
 * corroboration, refunds) is that of invoices of its mode only.
 */
export interface WatchScope {
  readonly network: string
  readonly livemode: boolean
}

export const liveScope = (network: string): WatchScope => ({ network, livemode: true })

/** The watcher's own name for its state: the network for a live one (unchanged), `<network>:test` for a testnet one. */
export const stateKey = (scope: WatchScope): string => (scope.livemode ? scope.network : `${scope.network}:test`)

/** The scope a state key names (the inverse of {@link stateKey}). */
export const scopeOfKey = (key: string): WatchScope => key.endsWith(":test") ? { network: key.slice(0, -":test".length), livemode: false } : { network: key, livemode: true }
