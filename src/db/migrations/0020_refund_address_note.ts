import { Effect } from "effect"
import { SqlClient } from "effect/sql"

// What the refund-address checks could not establish (issue #44): an EVM address not checked for contract code.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER TABLE refunds ADD COLUMN address_note text`)
})
