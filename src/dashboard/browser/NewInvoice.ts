/**
 * "New invoice": a small form over the merchant endpoint itself (`POST /api/checkout/invoices`,
 * which takes the session as it takes an API key), so the same validation, payment options and
 * idempotency apply. The form carries one Idempotency-Key from the moment it is drawn: submitting
 * it twice (a double click, a retry after a lost answer) creates one invoice.
 */

import type { CreateInvoiceBody, Invoice } from "./Api.ts"
import { api, h, show, submitting } from "./Ui.ts"

const field = (label: string, name: string, attributes: Record<string, string | boolean> = {}) => h("label", {}, label, h("input", { name, "data-field": name, ...attributes }))

/** The body the form describes; blank optional fields are left out, the amount is sent as a number (the server checks it). */
const bodyOf = (data: FormData): CreateInvoiceBody => {
  const text = (name: string) => {
    const value = String(data.get(name) ?? "").trim()
    return value === "" ? undefined : value
  }
  return {
    amountUsd: Number(text("amountUsd") ?? Number.NaN),
    ...(text("productName") === undefined ? {} : { productName: text("productName") }),
    ...(text("merchantReference") === undefined ? {} : { merchantReference: text("merchantReference") }),
    ...(text("customerEmail") === undefined ? {} : { customerEmail: text("customerEmail") })
  }
}

export const newInvoiceView = () => {
  const idempotencyKey = crypto.randomUUID()
  const form = h("form", { class: "card narrow" }, field("Amount (USD)", "amountUsd", { type: "number", min: "0.01", step: "0.01", required: true, inputmode: "decimal" }),
    field("Product name", "productName", { maxlength: "200" }), field("Reference (your order number)", "merchantReference", { maxlength: "200" }),
    field("Customer email", "customerEmail", { type: "email", autocomplete: "off" }), h("button", { type: "submit" }, "Create invoice")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const invoice = await api<Invoice>("POST", "/api/checkout/invoices", bodyOf(new FormData(form)), { "idempotency-key": idempotencyKey })
    location.hash = `#/invoices/${invoice.id}?created=1`
  }))
  show(h("p", {}, h("a", { href: "#/invoices" }, "← Invoices")), h("h1", {}, "New invoice"),
    h("p", {}, "The invoice gets a payment option for each payment method enabled in your checkout settings, and a payment page to send to your customer."), form)
}
