import { Schema, SchemaTransformation } from "effect"
import { Timestamp } from "./contract/Timestamps.ts"
const Str = Schema.String.annotate({ format: "date-time" })
const mk = (f: Schema.Top) => Schema.encodeUnknownSync(Schema.toCodecJson(Schema.Struct(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, f]))) as any) as any)
const nulls = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, null]))
const dates = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, new Date(1e12 + i)]))
const strs = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, new Date(1e12 + i).toISOString()]))
const NT = Schema.NullOr(Str).pipe(Schema.decodeTo(Schema.Union([Schema.Null, Schema.Date]), SchemaTransformation.transform({ decode: (s: string | null) => s === null ? null : new Date(s), encode: (d: Date | null) => d === null ? null : d.toISOString() })))
const T2 = Str.pipe(Schema.decodeTo(Schema.Date, SchemaTransformation.transform({ decode: (s: string) => new Date(s), encode: (d: Date) => d.toISOString() })))
const variants: Record<string, [any, any]> = {
  "NullOr(Str) null": [mk(Schema.NullOr(Str)), nulls],
  "NullOr(Timestamp) null": [mk(Schema.NullOr(Timestamp)), nulls],
  "Union(Null,Timestamp) null": [mk(Schema.Union([Schema.Null, Timestamp])), nulls],
  "Str str": [mk(Str), strs],
  "Timestamp date": [mk(Timestamp), dates],
  "Schema.Date date": [mk(Schema.Date), dates],
  "NullOr(Timestamp) date": [mk(Schema.NullOr(Timestamp)), dates],
  "NT null": [mk(NT), nulls],
  "NT date": [mk(NT), dates],
  "T2 date": [mk(T2), dates],
}
const mins: Record<string, number> = {}
for (let r = 0; r < 30; r++) for (const [name, [enc, v]] of Object.entries(variants)) {
  for (let i = 0; i < 300; i++) enc(v)
  const t = performance.now(); for (let i = 0; i < 3000; i++) enc(v); const us = (performance.now() - t) / 3000 * 1000
  mins[name] = Math.min(mins[name] ?? Infinity, us)
}
console.log(Object.fromEntries(Object.entries(mins).map(([k, v]) => [k, v.toFixed(2)])))
