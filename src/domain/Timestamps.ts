import { Schema } from "effect"

/**
 * Null first: a union tries candidates in order, and a Date (a declaration) is a candidate for any
 * input, so `NullOr(Date)` would build a failed Date check for every null timestamp it reads.
 */
export const NullableDate = Schema.Union([Schema.Null, Schema.Date])

/** Whether a schema's type is a Date (Schema.Date, however annotated). */
export const isDateSchema = (schema: Schema.Constraint): boolean => isDateAst(schema.ast)
/** Whether a schema's type is a Date or null (NullableDate, with or without a constructor default). */
export const isNullableDateSchema = (schema: Schema.Constraint): boolean =>
  schema.ast._tag === "Union" && schema.ast.types.some(isDateAst) && schema.ast.types.some((member) => member._tag === "Null")

const DATE_AST = Schema.Date.ast
const isDateAst = (ast: Schema.Constraint["ast"]): boolean => ast === DATE_AST || (ast._tag === "Declaration" && ast.run === DATE_AST.run)

/** A field as a JSON response carries it: a Date as ISO 8601 text (encoded from the Date), anything else as it is. */
export type JsonField<S extends Schema.Constraint> = S["Type"] extends Date ? typeof Schema.DateFromString
  : S["Type"] extends Date | null ? Date extends S["Type"] ? Schema.NullOr<typeof Schema.DateFromString> : S
  : S

/**
 * An entity's (or a view's) schema as a JSON response carries it: its timestamps encoded as ISO
 * 8601 text, every other field as it is. A view is a pick of the entity; its response schema is `jsonOf(view)`.
 */
export const jsonOf = <F extends Schema.Struct.Fields>(entity: Schema.Struct<F>) =>
  Schema.Struct(
    Object.fromEntries(Object.entries(entity.fields).map(([key, field]) => [
      key,
      isDateSchema(field) ? Schema.DateFromString : isNullableDateSchema(field) ? Schema.NullOr(Schema.DateFromString) : field
    ])) as { readonly [K in keyof F]: JsonField<F[K]> }
  )
