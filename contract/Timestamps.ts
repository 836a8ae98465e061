import { Schema, SchemaTransformation } from "effect"

/**
 * Null first: a union tries candidates in order, and a Date (a declaration) is a candidate for any
 * input, so `NullOr(Date)` would build a failed Date check for every null timestamp it reads.
 */
export const NullableDate = Schema.Union([Schema.Null, Schema.Date])

/**
 * A timestamp as JSON carries it: a Date in the value, ISO 8601 text (`format: date-time`) on the
 * wire. Every response schema's timestamps are this codec, so a view holds Dates and its
 * endpoint's schema writes the text (Model.ts, `jsonOf`).
 */
export const Timestamp = Schema.String.annotate({ format: "date-time" }).pipe(Schema.decodeTo(Schema.Date, SchemaTransformation.dateFromString))
export const NullableTimestamp = Schema.NullOr(Timestamp)

/** Whether a schema's type is a Date (Schema.Date, however annotated). */
export const isDateSchema = (schema: Schema.Constraint): boolean => isDateAst(schema.ast)
/** Whether a schema's type is a Date or null (NullableDate, with or without a constructor default). */
export const isNullableDateSchema = (schema: Schema.Constraint): boolean =>
  schema.ast._tag === "Union" && schema.ast.types.some(isDateAst) && schema.ast.types.some((member) => member._tag === "Null")

const DATE_AST = Schema.Date.ast
const isDateAst = (ast: Schema.Constraint["ast"]): boolean => ast === DATE_AST || (ast._tag === "Declaration" && ast.run === DATE_AST.run)
