import { Schema, SchemaGetter } from "effect"

/**
 * Codecs between the PostgreSQL driver's column values and entity values. A column may arrive
 * as the driver returns it (bigint as text, timestamptz as Date) or from a `json_build_object`
 * read (timestamps as ISO text, exact integers cast to text), so the decoders take both.
 */

const bigintColumns = new WeakSet<object>()

/** An exact integer column (bigint, numeric) decoded into `to` (a bigint schema, maybe branded); written as decimal text. */
export const bigintColumn = <To extends Schema.Top & { readonly Encoded: bigint; readonly DecodingServices: never; readonly EncodingServices: never }>(to: To) => {
  const column = Schema.Union([Schema.String, Schema.Number, Schema.BigInt]).pipe(
    Schema.decodeTo(to, {
      decode: SchemaGetter.transform((value: string | number | bigint) => BigInt(value)),
      encode: SchemaGetter.transform((value: bigint) => value.toString())
    })
  )
  bigintColumns.add(column.ast)
  return column
}

/** Whether a row field is an exact integer, which a JSON read must cast to text to keep every digit. */
export const isBigintColumn = (field: Schema.Top): boolean =>
  bigintColumns.has(field.ast) || (field.ast._tag === "Union" && field.ast.types.some((member) => bigintColumns.has(member)))

// One guard for both driver forms: a union would try its members in turn and build a failure for
// each miss, on every row of a hot read.
const DateOrText = Schema.declare((value: unknown): value is Date | string => value instanceof Date || typeof value === "string")
type JsonObject = { readonly [key: string]: unknown }
const ObjectOrText = Schema.declare((value: unknown): value is string | JsonObject =>
  typeof value === "string" || (typeof value === "object" && value !== null && !Array.isArray(value))
)

/** A timestamptz column: a Date from the driver or ISO text from a JSON read. */
export const DateColumn = DateOrText.pipe(
  Schema.decodeTo(Schema.Date, {
    decode: SchemaGetter.transform((value: Date | string) => (value instanceof Date ? value : new Date(value))),
    encode: SchemaGetter.transform((value: Date) => value)
  })
)

/** A json/jsonb column holding an object: parsed when the driver hands over text; written as JSON text. */
export const JsonObjectColumn = ObjectOrText.pipe(
  Schema.decodeTo(Schema.Record(Schema.String, Schema.Unknown), {
    decode: SchemaGetter.transform((value: string | { readonly [key: string]: unknown }) =>
      typeof value === "string" ? (JSON.parse(value) as { readonly [key: string]: unknown }) : value
    ),
    encode: SchemaGetter.transform((value: { readonly [key: string]: unknown }) => JSON.stringify(value))
  })
)

/** Nullable forms, null first (see NullableDate in domain/Timestamps.ts: no failed check per null). */
export const NullableDateColumn = Schema.Union([Schema.Null, DateColumn])
export const NullableJsonObjectColumn = Schema.Union([Schema.Null, JsonObjectColumn])
