import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Each attempt records the URL it went to: retries follow the URL configured at attempt time. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER TABLE webhook_attempts ADD COLUMN url text`)
})
