import { Effect } from "effect"
import { SqlClient } from "effect/sql"

// Issue #52: a payment one endpoint reported that no other endpoint corroborated yet (down, or a
// 1-1 dispute). Its evidence stays at 0 confirmations while a row is here, across restarts; the
// watcher asks again at every poll and deletes the row once a majority corroborates it.
const statements = [
  `CREATE TABLE uncorroborated_transfers (
    network text NOT NULL,
    transaction_hash text NOT NULL,
    output_index integer NOT NULL,
    reporter text NOT NULL,
    token text NOT NULL,
    disputed boolean NOT NULL DEFAULT false,
    since timestamptz NOT NULL,
    PRIMARY KEY (network, transaction_hash, output_index)
  )`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
