import { Effect, Schema } from "effect"
import { isDateSchema, isNullableDateSchema, NullableTimestamp, Timestamp } from "./Timestamps.ts"

/**
 * How an entity is declared (Invoice, PaymentOption, Payment in Invoice.ts; Delivery, ApiKey,
 * Merchant in their folders): once, as a `Schema.Struct` of its stored fields. The rest derives:
 * - its row: `rowOf(Entity)` (db/Columns.ts) gives each field the column codec its type calls for
 *   (timestamps, exact integers, JSON objects); SQL column lists come from the row's fields;
 * - its views: a view's response schema is `jsonOf(Entity.mapFields(Struct.pick([...])))` (or a
 *   pick of `jsonFields(Entity.fields)`) plus its computed fields, declared once; the view's value
 *   is a domain value of that schema's type (Dates, not text) and the endpoint's schema encodes it
 *   (timestamps as ISO text); the browser's types are the API's response types;
 * - creation: fields the lifecycle sets later are declared `later(schema, initial)` and
 *   `Entity.make({...})` fills them in; `changing` marks a field the lifecycle changes that has no
 *   initial value; `changingFields(Entity)` lists both (the columns an update writes).
 * A new field is one line in the entity, one migration, and its name in the pick of each view that
 * shows it. The order of an entity's fields is the order of the keys in JSON answers (`Struct.pick`
 * keeps the source's order).
 */

const changingSchemas = new WeakSet<object>()
const initialValues = new WeakMap<object, unknown>()

/** A field the lifecycle changes after creation (an update writes it). */
export const changing = <S extends Schema.Top>(schema: S): S["Rebuild"] => {
  // A copy of its own: marking a shared schema (Schema.Number, a literal union) would mark every field using it.
  const own = schema.annotate({})
  changingSchemas.add(own)
  return own
}

/** A field the lifecycle sets after creation, `initial` until then: `Entity.make` fills it in, so a creation names only what it is given. */
export const later = <S extends Schema.Top & Schema.WithoutConstructorDefault>(schema: S, initial: S["~type.make.in"]) => {
  const field = changing(schema.pipe(Schema.withConstructorDefault(Effect.succeed(initial))))
  initialValues.set(field, initial)
  return field
}

/**
 * `Entity.make` for a hot path: the same input (the `later` fields may be left out) and the same
 * value, without the parse (about 10 µs for an invoice): the input is typed, so it is left as given.
 */
export const maker = <F extends Schema.Struct.Fields>(entity: Schema.Struct<F>) => {
  const initial = Object.fromEntries(Object.entries(entity.fields).filter(([, field]) => initialValues.has(field)).map(([key, field]) => [key, initialValues.get(field)]))
  return (given: Schema.Struct<F>["~type.make.in"]): Schema.Struct<F>["Type"] => ({ ...initial, ...given }) as Schema.Struct<F>["Type"]
}

/** The fields of an entity declared `changing` or `later`, in declaration order. */
export const changingFields = <F extends Schema.Struct.Fields>(entity: Schema.Struct<F>): Array<keyof F & string> =>
  Object.keys(entity.fields).filter((key) => changingSchemas.has(entity.fields[key]))

/** A field as JSON carries it: a Date as the `Timestamp` codec (a Date in the value, ISO 8601 text on the wire), anything else as it is. */
export type JsonField<S extends Schema.Constraint> = S["Type"] extends Date ? typeof Timestamp
  : S["Type"] extends Date | null ? Date extends S["Type"] ? typeof NullableTimestamp : S
  : S

/** An entity's fields as JSON carries them: its timestamps are `Timestamp` codecs, every other field as it is. */
export const jsonFields = <const F extends Schema.Struct.Fields>(fields: F): { readonly [K in keyof F]: JsonField<F[K]> } =>
  Object.fromEntries(Object.entries(fields).map(([key, field]) => [
    key,
    isDateSchema(field) ? Timestamp : isNullableDateSchema(field) ? NullableTimestamp : field
  ])) as { readonly [K in keyof F]: JsonField<F[K]> }

/**
 * An entity's (or a view's) schema as a JSON response carries it: the same values (Dates stay
 * Dates), its timestamps encoded as ISO 8601 text. A view is a pick of the entity; its response
 * schema is `jsonOf(view)` (or a pick of `jsonFields(Entity.fields)`), and the endpoint encodes the view's value.
 */
export const jsonOf = <F extends Schema.Struct.Fields>(entity: Schema.Struct<F>) => Schema.Struct(jsonFields(entity.fields))
