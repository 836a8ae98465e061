import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE rate_limits (
    key text PRIMARY KEY,
    count double precision NOT NULL,
    expires_at_ms bigint NOT NULL,
    last_exceeded boolean NOT NULL DEFAULT false
  )`)
  yield* sql.unsafe(`CREATE INDEX rate_limits_expiry ON rate_limits (expires_at_ms)`)
})
