import { describe, expect, it } from "@effect/vitest"
import { DEPARTURES, isKnownDeparture } from "./departures.ts"
import { dueDateSpecLayer, inMemorySpecLayer } from "./SpecProperty.ts"
import { runCase, TABLE_CASES } from "./TableCases.ts"
import { TRANSITIONS } from "./transitions.ts"

/**
 * The spec's "States and transitions" table (test/spec/transitions.ts) as the test: every row runs
 * as at least one case against the real services, on the in-memory repositories. Cases of a row
 * listed in departures.ts are expected to fail until src/ is fixed.
 */

const dueDateLayer = dueDateSpecLayer

describe("the spec's transition table", () => {
  it("has a case for every row, and every case names a row", () => {
    const rows = new Set(TRANSITIONS.map((row) => row.id))
    expect(TRANSITIONS.filter((row) => !TABLE_CASES.some((tableCase) => tableCase.row === row.id)).map((row) => row.id)).toEqual([])
    expect(TABLE_CASES.filter((tableCase) => !rows.has(tableCase.row)).map((tableCase) => tableCase.row)).toEqual([])
    expect(rows.size).toBe(TRANSITIONS.length)
  })

  it("lists departures only for rows that exist", () => {
    expect(Object.keys(DEPARTURES).filter((row) => !TRANSITIONS.some((candidate) => candidate.id === row))).toEqual([])
  })
})

for (const [name, layer, dueDate] of [["immediate timing (60 minutes)", inMemorySpecLayer, false], ["due-date timing (7 days, 3 of grace)", dueDateLayer, true]] as const) {
  it.layer(layer)(`rows on the service, ${name}`, (it) => {
    for (const tableCase of TABLE_CASES.filter((candidate) => (candidate.dueDate === true) === dueDate)) {
      const title = `${tableCase.row}: ${tableCase.title}`
      if (isKnownDeparture(tableCase.row, tableCase.title)) it.effect.fails(`${title} (known departure: ${DEPARTURES[tableCase.row].observed})`, () => runCase(tableCase))
      else it.effect(title, () => runCase(tableCase))
    }
  })
}
