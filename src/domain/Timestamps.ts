import { Schema } from "effect"

/**
 * Null first: a union tries candidates in order, and a Date (a declaration) is a candidate for any
 * input, so `NullOr(Date)` would build a failed Date check for every null timestamp it reads.
 */
export const NullableDate = Schema.Union([Schema.Null, Schema.Date])
