/**
 * Why `npm run simulate -- expire` left an invoice payable: invoice expiry does not expire
 * an invoice while a watcher of one of its options' networks has processed chain data only up to
 * a time before the deadline (chain time decides lateness). Pure; the CLI prints what it returns.
 */
interface WatcherProgress {
  readonly network: string
  readonly configured: boolean
  readonly chainTime: string | null
}

interface HeldInvoice {
  readonly status: string
  readonly payableUntilAt: string
  readonly paymentOptions: ReadonlyArray<{ readonly network: string }>
}

const EXPIRABLE = ["awaiting_payment", "partially_paid"]

const howToMove = (network: string) =>
  network === "bitcoin"
    ? "mine a block on the Esplora server it watches"
    : `mine a block on its node (anvil: cast rpc evm_mine --rpc-url $CHECKOUT_RPC_URL_${network.toUpperCase()})`

/** The lines that explain the hold, or [] when the invoice expired or nothing holds it. */
export const expiryHeldBack = (invoice: HeldInvoice, watchers: ReadonlyArray<WatcherProgress>): ReadonlyArray<string> => {
  if (!EXPIRABLE.includes(invoice.status)) return []
  const deadline = Date.parse(invoice.payableUntilAt)
  const networks = new Set(invoice.paymentOptions.map((option) => option.network))
  const lagging = watchers.filter((watcher) => watcher.configured && networks.has(watcher.network) && (watcher.chainTime === null || Date.parse(watcher.chainTime) < deadline))
  if (lagging.length === 0) return []
  return [
    `not expired yet: chain time decides lateness, and a watcher has not processed its chain up to the deadline (${invoice.payableUntilAt}):`,
    ...lagging.map((watcher) =>
      `  ${watcher.network}: processed up to ${watcher.chainTime ?? "no block yet"}; ${howToMove(watcher.network)}, or start the service without its watcher`
    ),
    "invoice expiry expires the invoice once every such watcher has passed the deadline (run expire again then)"
  ]
}
