import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // What a network's watcher last published about its endpoints (JSON, see chains/endpoints/EndpointSelection.ts
  // EndpointsReport: each endpoint's origin and state, and the height they disagree about, if any).
  `ALTER TABLE chain_cursors ADD COLUMN endpoints text`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
