import { Schema, SchemaTransformation } from "effect"
import { InvoiceView } from "./src/domain/InvoiceResponses.ts"
import { merchantInvoiceView } from "./src/domain/InvoiceViews.ts"
import { InvoiceView as OldInvoiceView } from "/tmp/views-start/src/domain/InvoiceResponses.ts"
import { merchantInvoiceView as oldMerchantInvoiceView } from "/tmp/views-start/src/domain/InvoiceViews.ts"
import { invoiceRecord } from "./test/support/InvoiceFixtures.ts"
import { Micros } from "./src/domain/Money.ts"
const createdAt = new Date("2026-03-01T10:00:00.000Z")
const invoice = { ...invoiceRecord({ amountMicros: Micros.make(25_000_000n), createdAt }) }
const parts = { invoice, options: [], payments: [] }
const enc = Schema.encodeUnknownSync(Schema.toCodecJson(InvoiceView) as any)
const oldEnc = Schema.encodeUnknownSync(Schema.toCodecJson(OldInvoiceView) as any)
const mins: Record<string, number> = {}
const bench = (name: string, f: () => unknown) => { for (let i = 0; i < 500; i++) f(); const t = performance.now(); for (let i = 0; i < 3000; i++) f(); const us = (performance.now() - t) / 3000 * 1000; mins[name] = Math.min(mins[name] ?? Infinity, us) }
console.log(JSON.stringify(enc(merchantInvoiceView(parts, "x", createdAt))) === JSON.stringify(oldEnc(oldMerchantInvoiceView(parts as any, "x", createdAt))))
for (let r = 0; r < 40; r++) {
  bench("new view+encode", () => JSON.stringify(enc(merchantInvoiceView(parts, "x", createdAt))))
  bench("old view+encode", () => JSON.stringify(oldEnc(oldMerchantInvoiceView(parts as any, "x", createdAt))))
}

console.log(mins)
