/**
 * The environment variable that gives a network's watcher its endpoints (and so turns it on): one
 * rule for the configuration, the checkout settings' refusal and the dashboard's chain-watchers view.
 * No imports: the dashboard's browser script bundles it.
 */
export const endpointVariable = (network: string): string => network === "bitcoin" ? "CHECKOUT_ESPLORA_URL" : `CHECKOUT_RPC_URL_${network.toUpperCase()}`

/** The variable that gives a network's testnet watcher (test invoices only) its endpoints: the live one's with a TEST_ infix. */
export const testEndpointVariable = (network: string): string => endpointVariable(network).replace(/^CHECKOUT_/, "CHECKOUT_TEST_")
