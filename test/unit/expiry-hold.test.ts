import { describe, expect, it } from "vitest"
import { expiryHeldBack } from "../../scripts/expiry-hold.ts"

const invoice = {
  status: "awaiting_payment",
  payableUntilAt: "2026-11-26T10:00:00.000Z",
  paymentOptions: [{ network: "base" }, { network: "bitcoin" }]
}
const watcher = (network: string, chainTime: string | null, configured = true) => ({ network, configured, chainTime })

describe("npm run simulate -- expire: why an invoice stayed payable", () => {
  it("names each watcher of the invoice's networks whose chain time is before the deadline, and how to move it", () => {
    const lines = expiryHeldBack(invoice, [
      watcher("base", "2026-11-26T09:59:58.000Z"),
      watcher("bitcoin", "2026-11-26T10:00:00.000Z"),
      watcher("ethereum", null)
    ])
    expect(lines[0]).toMatch(/^not expired yet: chain time decides lateness/)
    expect(lines.slice(1, -1)).toEqual([
      "  base: processed up to 2026-11-26T09:59:58.000Z; mine a block on its node (anvil: cast rpc evm_mine --rpc-url $CHECKOUT_RPC_URL_BASE), or start the service without its watcher"
    ])
  })

  it("says nothing when the invoice expired, or no watcher of its networks lags", () => {
    expect(expiryHeldBack({ ...invoice, status: "expired" }, [watcher("base", null)])).toEqual([])
    expect(expiryHeldBack(invoice, [watcher("base", null, false), watcher("solana", null)])).toEqual([])
    expect(expiryHeldBack(invoice, [watcher("bitcoin", null)])).toHaveLength(3)
  })
})
