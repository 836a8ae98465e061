import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A running Idempotency-Key claim is a lease (renewed while its request runs), and records the
 * resource its request committed a change to, so that a retry after a crash replays it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER TABLE idempotency_keys ADD COLUMN lease_until timestamptz, ADD COLUMN resource_id uuid`)
})
