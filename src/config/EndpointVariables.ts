/**
 * The environment variable that gives a network's watcher its endpoints (and so turns it on): one
 * rule for the configuration, the checkout settings' refusal and the dashboard's chain-watchers view.
 * No imports: the dashboard's browser script bundles it.
 */
export const endpointVariable = (network: string): string => network === "bitcoin" ? "CHECKOUT_ESPLORA_URL" : `CHECKOUT_RPC_URL_${network.toUpperCase()}`
