import { Effect, Schema } from "effect"
import { isDateSchema, isNullableDateSchema } from "./Timestamps.ts"

/**
 * How an entity is declared (Invoice, PaymentOption, Payment in Invoice.ts; Delivery, ApiKey,
 * Merchant in their folders): once, as a `Schema.Struct` of its stored fields. The rest derives:
 * - its row: `rowOf(Entity)` (db/Columns.ts) gives each field the column codec its type calls for
 *   (timestamps, exact integers, JSON objects); SQL column lists come from the row's fields;
 * - its views: a view is `Entity.mapFields(Struct.pick([...]))` (or `Struct.pick` of its fields)
 *   plus its computed fields; the view's response schema is `jsonOf(view)` (timestamps as ISO
 *   text), and the browser's types are the API's response types;
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
