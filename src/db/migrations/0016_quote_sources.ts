import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // What each asset's quote of an invoice rested on: the rate (exact micro-dollars), its basis
  // (the median of price sources, a stablecoin at par, or the demo's fixed rate), the spread of the
  // sources' answers (parts per million of the median) and the sources used and left out (JSON,
  // prices as decimal text). Written with the invoice, never changed.
  `CREATE TABLE invoice_quotes (
    invoice_id uuid NOT NULL REFERENCES invoices(id),
    asset_code text NOT NULL,
    usd_micros bigint NOT NULL CHECK (usd_micros > 0),
    basis text NOT NULL CHECK (basis IN ('sources', 'par', 'fixed')),
    spread_ppm bigint NOT NULL CHECK (spread_ppm >= 0),
    sources jsonb NOT NULL,
    left_out jsonb NOT NULL,
    PRIMARY KEY (invoice_id, asset_code)
  )`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
