import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { isBigintColumn, rowOf } from "../../src/db/Columns.ts"
import { INVOICE_STATE_FIELDS, Invoice } from "../../src/domain/Invoice.ts"
import { changing, changingFields, jsonOf, later, maker } from "../../src/domain/EntitySchema.ts"
import { Micros } from "../../src/domain/Money.ts"
import { NullableDate } from "../../src/domain/Timestamps.ts"
import { INVOICE_ROW_COLUMNS } from "../../src/invoices/InvoiceRows.ts"

/** An entity declared as the pattern says (contract/Model.ts): every kind of field the derivations treat apart. */
const Thing = Schema.Struct({
  id: Schema.String,
  amount: Micros,
  payload: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  state: changing(Schema.Literals(["open", "closed"])),
  count: later(Schema.Number, 0),
  createdAt: Schema.Date,
  closedAt: later(NullableDate, null)
})

describe("entity derivations (contract/Model.ts, db/Columns.ts)", () => {
  it("rowOf gives each field the column codec its type calls for, whichever form the driver returns", () => {
    const decode = Schema.decodeUnknownSync(rowOf(Thing))
    const fromDriver = decode({
      id: "t",
      amount: "9007199254740993",
      payload: "{\"a\":1}",
      state: "open",
      count: 2,
      createdAt: new Date("2026-01-01T00:00:00Z"),
      closedAt: null
    })
    const fromJsonRead = decode({
      id: "t",
      amount: "9007199254740993",
      payload: { a: 1 },
      state: "open",
      count: 2,
      createdAt: "2026-01-01T00:00:00+00:00",
      closedAt: "2026-01-02T00:00:00+00:00"
    })
    expect(fromDriver).toEqual({ ...fromJsonRead, closedAt: null })
    expect(fromDriver.amount).toBe(9007199254740993n)
    expect(fromJsonRead.closedAt).toEqual(new Date("2026-01-02T00:00:00Z"))
    expect(Schema.encodeSync(rowOf(Thing))(fromJsonRead)).toMatchObject({ amount: "9007199254740993", payload: "{\"a\":1}" })
    expect(Object.entries(rowOf(Thing).fields).filter(([, field]) => isBigintColumn(field)).map(([key]) => key)).toEqual(["amount"])
  })

  it("jsonOf encodes timestamps as ISO text and leaves the rest", () => {
    const thing = Thing.make({ id: "t", amount: Micros.make(5n), payload: null, state: "open", createdAt: new Date("2026-01-01T00:00:00Z") })
    expect(Schema.encodeSync(jsonOf(Thing))(thing)).toEqual({
      id: "t",
      amount: 5n,
      payload: null,
      state: "open",
      count: 0,
      createdAt: "2026-01-01T00:00:00.000Z",
      closedAt: null
    })
  })

  it("make fills the later fields with their initial values; changingFields lists what the lifecycle changes", () => {
    const given = { id: "t", amount: Micros.make(5n), payload: { a: 1 }, state: "open" as const, createdAt: new Date("2026-01-01T00:00:00Z") }
    expect(Thing.make(given)).toEqual({ ...given, count: 0, closedAt: null })
    expect(maker(Thing)(given)).toEqual(Thing.make(given))
    expect(maker(Thing)({ ...given, count: 3 }).count).toBe(3)
    expect(changingFields(Thing)).toEqual(["state", "count", "closedAt"])
    expect(INVOICE_STATE_FIELDS).toContain("status")
    expect(INVOICE_STATE_FIELDS).toContain("lastPaymentObservedAt")
    expect(INVOICE_STATE_FIELDS).not.toContain("createdAt")
    expect(INVOICE_STATE_FIELDS).not.toContain("amountMicros")
  })

  it("the invoice's row has a column for every field of the invoice (the timing spread over its own)", () => {
    const columns = INVOICE_ROW_COLUMNS.map(({ key }) => key)
    for (const key of Object.keys(Invoice.fields).filter((key) => key !== "timing")) expect(columns).toContain(key)
    expect(columns).toEqual(expect.arrayContaining(["timingMode", "payableUntilAt", "dueAt"]))
    expect(INVOICE_ROW_COLUMNS.filter((column) => column.exact).map(({ key }) => key)).toEqual(["amountMicros", "receivedMicros", "confirmedMicros"])
  })
})
