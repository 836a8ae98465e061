import { Schema } from "effect"
import { usdNumberToMicros } from "./Money.ts"
import { TIMING_BOUNDS } from "./Timing.ts"

/**
 * Request schemas. Messages are written without the field name: the error mapping prefixes
 * the path of the first invalid field (`productName must be at most 200 characters`).
 */
export const text = (max: number) =>
  Schema.String.annotate({ message: "must be a string" }).check(
    Schema.isMaxCodePoints(max, { message: `must be at most ${max} characters` })
  )

/** An optional field that also accepts null (treated as absent). */
const optionalNullable = <S extends Schema.Top>(schema: S, message: string) => Schema.optionalKey(Schema.NullOr(schema).annotate({ message }))

const optionalText = (max: number) => optionalNullable(text(max), "must be a string")

export const integerBetween = (min: number, max: number) =>
  Schema.Finite.annotate({ message: "must be a number" }).check(
    Schema.isInt({ message: "must be an integer" }),
    Schema.isGreaterThanOrEqualTo(min, { message: `must be at least ${min}` }),
    Schema.isLessThanOrEqualTo(max, { message: `must be at most ${max}` })
  )

export const MAX_AMOUNT_USD = 1_000_000_000

export const AmountUsd = Schema.Finite.annotate({ message: "must be a number" }).check(
  Schema.isGreaterThanOrEqualTo(0.01, { message: "must be at least 0.01" }),
  Schema.isLessThanOrEqualTo(MAX_AMOUNT_USD, { message: `must be at most ${MAX_AMOUNT_USD}` }),
  Schema.makeFilter<number>((value) => usdNumberToMicros(value, 2) !== undefined, { message: "must have at most 2 decimal places" })
)

export const PaymentTimingOverride = Schema.Struct({
  mode: Schema.Literals(["immediate", "due_date"]).annotate({ message: "must be one of immediate, due_date" }),
  expiresAfterMinutes: Schema.optionalKey(
    integerBetween(TIMING_BOUNDS.expiresAfterMinutes.min, TIMING_BOUNDS.expiresAfterMinutes.max)
  ),
  dueAfterDays: Schema.optionalKey(integerBetween(TIMING_BOUNDS.dueAfterDays.min, TIMING_BOUNDS.dueAfterDays.max)),
  gracePeriodDays: Schema.optionalKey(
    integerBetween(TIMING_BOUNDS.gracePeriodDays.min, TIMING_BOUNDS.gracePeriodDays.max)
  )
}).annotate({ message: "must be an object", description: "Per-invoice override of the dashboard's default payment timing." })

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}

const RedirectUrl = text(2048).check(
  Schema.makeFilter<string>(isHttpUrl, { message: "must be an absolute http or https URL" })
)

const CustomerEmail = text(320).check(
  Schema.makeFilter<string>((value) => /^[^\s@]+@[^\s@]+$/.test(value), { message: "must be an email address" })
)

export const MAX_METADATA_JSON = 16_384

// The spec's form for a length: `metadata.notes must be at most 140 characters`; a wrong type says so.
const MetadataNotes = Schema.String.annotate({ message: "must be a string" }).check(
  Schema.isMaxCodePoints(140, { message: "must be at most 140 characters" })
)

export const Metadata = Schema.StructWithRest(
  Schema.Struct({ notes: Schema.optionalKey(MetadataNotes) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({ message: "must be a JSON object" }).check(
  Schema.makeFilter<object>((value) => JSON.stringify(value).length <= MAX_METADATA_JSON, {
    message: `must be at most ${MAX_METADATA_JSON} characters of JSON`
  })
)

export const CreateInvoiceBody = Schema.Struct({
  amountUsd: AmountUsd.annotateKey({ messageMissingKey: "is required" }),
  paymentTiming: optionalNullable(PaymentTimingOverride, "must be an object"),
  productName: optionalText(200),
  issuedBy: optionalText(120),
  billTo: optionalText(120),
  redirectUrl: optionalNullable(RedirectUrl, "must be a string"),
  merchantReference: optionalText(200),
  customerId: optionalText(200),
  customerEmail: optionalNullable(CustomerEmail, "must be a string"),
  metadata: optionalNullable(Metadata, "must be a JSON object")
}).annotate({ message: "must be a JSON object" })
export type CreateInvoiceBody = typeof CreateInvoiceBody.Type

/** A required note a person reads later: text of at most `max` characters, refused when empty or only whitespace. */
export const requiredNote = (max: number) =>
  text(max).check(Schema.makeFilter<string>((value) => value.trim() !== "", { message: "must not be empty" })).annotateKey({
    messageMissingKey: "is required"
  })

export const RecordPaymentBody = Schema.Struct({ note: requiredNote(2000) }).annotate({ message: "must be a JSON object" })

/**
 * A body without fields: `{}`, or no body at all (every field is optional). Any key is refused
 * with `<key> is not a known field`; an empty struct would let keys through even with
 * `onExcessProperty: "error"`.
 */
export const VoidBody = [
  Schema.Record(Schema.String, Schema.Never.annotate({ message: "is not a known field" }))
    .annotate({ message: "must be a JSON object", description: "An empty JSON object; the body may be omitted." }),
  // No body at all reaches the decoder as null (the platform's nullOnEmpty needs a Null member).
  Schema.Null
] as const

/**
 * A path parameter that names a uuid column. Validated at the edge: a malformed one would fail its
 * statement in PostgreSQL (22P02) instead of answering 400.
 */
export const UuidParam = Schema.String.check(Schema.isUUID(undefined, { message: "must be a valid UUID" }))

export const InvoiceIdParams = Schema.Struct({ id: UuidParam })
