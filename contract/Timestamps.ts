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
