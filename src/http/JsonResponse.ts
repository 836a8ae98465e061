import type { Schema } from "effect"
import { HttpServerResponse } from "effect/http"

/**
 * Answers with a value already in its schema's encoded (JSON) form, without running the schema's
 * encoder: the invoice views are plain JSON objects built field by field, and encoding a 20 kB
 * invoice through the schema cost more CPU than the database read behind it. The schema still
 * types `value` at compile time and documents the endpoint; test/unit/response-contract.test.ts
 * checks every view against it at run time, excess keys included.
 */
export const jsonResponse = <S extends Schema.Top>(_schema: S, value: NoInfer<S["Encoded"]>, status = 200) =>
  HttpServerResponse.text(JSON.stringify(value), { status, contentType: "application/json" })
