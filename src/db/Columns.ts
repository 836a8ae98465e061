import { Schema, SchemaAST, SchemaGetter } from "effect"
import { isDateSchema, isNullableDateSchema } from "../domain/Timestamps.ts"

/**
 * Codecs between the PostgreSQL driver's column values and entity values. A column may arrive
 * as the driver returns it (bigint as text, timestamptz as Date) or from a `json_build_object`
 * read (timestamps as ISO text, exact integers cast to text), so the decoders take both.
 */

const bigintColumns = new WeakSet<object>()

type BigintSchema = Schema.Top & { readonly Encoded: bigint; readonly DecodingServices: never; readonly EncodingServices: never }
type BigintColumn<To extends BigintSchema> = Schema.decodeTo<To, Schema.Union<readonly [Schema.String, Schema.Number, Schema.BigInt]>>

/** An exact integer column (bigint, numeric) decoded into `to` (a bigint schema, maybe branded); written as decimal text. */
export const bigintColumn = <To extends BigintSchema>(to: To): BigintColumn<To> => {
  const column: BigintColumn<To> = Schema.Union([Schema.String, Schema.Number, Schema.BigInt]).pipe(
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

/** Nullable forms, null first (see NullableDate in contract/Timestamps.ts: no failed check per null). */
export const NullableDateColumn = Schema.Union([Schema.Null, DateColumn])
export const NullableJsonObjectColumn = Schema.Union([Schema.Null, JsonObjectColumn])

type JsonObjectValue = { readonly [key: string]: unknown }

/** The column codec of an entity field of schema S: chosen by its type, as `rowOf` does. */
export type ColumnOf<S extends Schema.Constraint> = S["Type"] extends Date ? typeof DateColumn
  : S["Type"] extends Date | null ? Date extends S["Type"] ? typeof NullableDateColumn : S
  : S["Encoded"] extends bigint ? S extends BigintSchema ? BigintColumn<S> : S
  : S["Type"] extends JsonObjectValue | null ? string extends keyof NonNullable<S["Type"]> ? null extends S["Type"] ? typeof NullableJsonObjectColumn : typeof JsonObjectColumn : S
  : S

const isJsonObjectAst = (ast: SchemaAST.AST) => ast._tag === "Objects" && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 1

/** The column codec of one entity field: timestamps, exact integers and JSON objects get theirs; any other field is its own codec. */
export const columnOf = <S extends Schema.Constraint>(field: S): ColumnOf<S> => {
  const ast = field.ast
  const column: Schema.Constraint = isDateSchema(field)
    ? DateColumn
    : isNullableDateSchema(field)
    ? NullableDateColumn
    : SchemaAST.toEncoded(ast)._tag === "BigInt"
    ? bigintColumn(field as unknown as BigintSchema)
    : isJsonObjectAst(ast)
    ? JsonObjectColumn
    : ast._tag === "Union" && ast.types.some(isJsonObjectAst)
    ? NullableJsonObjectColumn
    : field
  return column as ColumnOf<S>
}

/** An entity's fields as a row of its table holds them (keys stay camelCase: the client maps them to snake_case columns). */
export const rowFields = <const F extends Schema.Struct.Fields>(fields: F): { readonly [K in keyof F]: ColumnOf<F[K]> } =>
  Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, columnOf(field)])) as { readonly [K in keyof F]: ColumnOf<F[K]> }

/**
 * The row schema of an entity (a Schema.Struct): the same fields with the column codec each
 * field's type calls for (timestamps, exact integers, JSON objects). A row is never declared by
 * hand: a new entity field is a new column with nothing to add here.
 */
export const rowOf = <F extends Schema.Struct.Fields>(entity: Schema.Struct<F>) => Schema.Struct(rowFields(entity.fields))
