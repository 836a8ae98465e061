import { Effect } from "effect"
import { SqlClient } from "effect/sql"

// The shop origins that may frame the merchant's payment pages (issue #57): the pages' frame-ancestors.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER TABLE checkout_settings ADD COLUMN embed_origins text[] NOT NULL DEFAULT '{}'`)
})
