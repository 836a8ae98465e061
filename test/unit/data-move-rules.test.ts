import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { moveData } from "../../src/db/move/DataMove.ts"
import { dependencyOrder } from "../../src/db/move/TableCatalog.ts"

describe("data move (issue #56)", () => {
  it("copies parents before the tables whose foreign keys point to them", () => {
    const references = [
      { from: "payments", to: "payment_options" },
      { from: "payments", to: "invoices" },
      { from: "payment_options", to: "invoices" },
      { from: "invoices", to: "merchants" },
      { from: "outbox", to: "refunds" },
      { from: "refunds", to: "invoices" },
      { from: "webhook_attempts", to: "webhook_deliveries" }
    ]
    const tables = ["outbox", "payments", "webhook_attempts", "refunds", "payment_options", "merchants", "invoices", "webhook_deliveries", "rate_limits"]
    const order = dependencyOrder(tables, references)
    expect([...order].sort()).toEqual([...tables].sort())
    for (const { from, to } of references) expect(order.indexOf(to)).toBeLessThan(order.indexOf(from))
  })

  it("refuses a directory without an embedded database before it reaches the target", async () => {
    const error = await Effect.runPromise(Effect.flip(moveData("/nonexistent/checkout-data", "postgres://nobody@127.0.0.1:1/none")))
    expect(error.message).toBe("data move refused: there is no embedded database in /nonexistent/checkout-data (CHECKOUT_DATA_DIR); nothing was changed")
  })
})
