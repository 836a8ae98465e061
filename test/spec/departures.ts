/**
 * Rows of transitions.ts where the service is known to depart from the spec, with what it does
 * instead. While a row is listed, its table cases (all of them, or those named in `cases`) run as
 * `it.fails`, and the random sequences leave out (or do not compare) what it would break. Delete
 * the entry once src/ is fixed: the tests then hold the service to the row.
 */
export interface Departure {
  readonly observed: string
  /** The titles of the row's cases that fail; absent: all of them. */
  readonly cases?: ReadonlyArray<string>
}

// Empty: the working tree of 2026-11-26 passes every row. Committed HEAD 94809a6 departed on three
// rows, and the suite passed there with these entries (4 cases as it.fails):
//   "D7-reopen-after-closed": { observed: "a late payment after a closed exception opens no new exception" },
//   "F1-last-transaction-hash": { observed: "keeps the invalidated hash", cases: ["lastTransactionHash is null once no payment counts"] },
//   "D17-confirmations": { observed: "least over every valid payment", cases: ["a later unconfirmed overpayment does not lower a confirmed invoice's confirmations"] }
export const DEPARTURES: Readonly<Record<string, Departure>> = {}

export const KNOWN_DEPARTURES: ReadonlySet<string> = new Set(Object.keys(DEPARTURES))

export const isKnownDeparture = (row: string, title: string) => {
  const departure = DEPARTURES[row]
  return departure !== undefined && (departure.cases === undefined || departure.cases.includes(title))
}
