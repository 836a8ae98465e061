/** Checkout settings and payment methods, of the mode shown (Mode.ts). */

import type { Network } from "../../payments/Networks.ts"
import type { CheckoutSettings, PaymentMethod } from "./Api.ts"
import { inMode, viewingTestData } from "./Mode.ts"
import { api, ApiError, h, notice, select, show, submitting } from "./Ui.ts"

/** The server's networks in the order offered: one missing or unknown fails the type check (a type import: nothing at run time). */
const OFFERED_NETWORKS = { ethereum: true, arbitrum: true, base: true, solana: true, bitcoin: true } satisfies Record<Network, true>
const NETWORKS = Object.keys(OFFERED_NETWORKS)

const methodRow = (method: Partial<PaymentMethod>, index: number) =>
  h("fieldset", { class: "method" }, h("legend", {}, `Method ${index + 1}`), select(`paymentMethods[${index}].network`, "Network", NETWORKS, method.network, ""),
    select(`paymentMethods[${index}].assetCode`, "Asset", ["USDT", "USDC", "BTC"], method.assetCode, ""),
    select(`paymentMethods[${index}].railType`, "Rail", ["address_transfer", "wallet_contract"], method.railType, ""),
    h("label", {}, "Recipient address",
      h("input", { name: `paymentMethods[${index}].recipientAddress`, "data-field": `paymentMethods[${index}].recipientAddress`, value: method.recipientAddress ?? "" })),
    h("label", {}, "Extended public key", h("input", { name: `paymentMethods[${index}].xpub`, "data-field": `paymentMethods[${index}].xpub`, value: method.xpub ?? "" })), // Raises the key's counter (issue #56): the next deposit address index is shown as the placeholder.
    h("label", {}, "Start index (next address index)",
      h("input", { type: "number", min: "0", name: `paymentMethods[${index}].startIndex`, "data-field": `paymentMethods[${index}].startIndex`,
        placeholder: String(method.nextIndex ?? 0) })),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: `paymentMethods[${index}].enabled`, checked: method.enabled !== false }), "Enabled"),
    h("label", { class: "check" }, h("input", { type: "radio", name: "defaultMethod", value: String(index), checked: method.isDefault === true }), "Default"),
    h("button", { type: "button", class: "link", onclick: (event: Event) => (event.target as HTMLElement).closest("fieldset")!.remove() }, "Remove"))

export const settingsView = async () => {
  const settings = await api<CheckoutSettings>("GET", inMode("/api/dashboard/checkout-settings")).catch((error: ApiError): CheckoutSettings => {
    if (error.status !== 404) throw error
    return { livemode: true, issuedBy: "", paymentTiming: { mode: "immediate", expiresAfterMinutes: 60 }, paymentMethods: [], embedOrigins: [], warnings: [] }
  })
  const warnings = h("div", { class: "settings-warnings" }, ...settings.warnings.map((warning) => notice(warning)))
  const hint = viewingTestData() && settings.livemode
    ? notice("Test mode uses your live settings until you save test settings here: test payment methods may name testnet wallets.", "ok")
    : settings.paymentMethods.length === 0
    ? notice("No payment methods yet: add at least one and save, then create an API key.", "ok")
    : null
  const timing = settings.paymentTiming
  const methods = h("div", {}, ...settings.paymentMethods.map(methodRow))
  const form = h("form", { class: "card" },
    h("label", {}, "Issued by (shown to payers)", h("input", { name: "issuedBy", "data-field": "issuedBy", value: settings.issuedBy ?? "" })),
    select("paymentTiming.mode", "Payment timing", ["immediate", "due_date"], timing.mode, ""),
    h("label", {}, "Expires after (minutes, immediate)",
      h("input", { type: "number", name: "paymentTiming.expiresAfterMinutes", "data-field": "paymentTiming.expiresAfterMinutes",
        value: String(timing.mode === "immediate" ? timing.expiresAfterMinutes : 60) })),
    h("label", {}, "Due after (days, due date)",
      h("input", { type: "number", name: "paymentTiming.dueAfterDays", "data-field": "paymentTiming.dueAfterDays",
        value: String(timing.mode === "due_date" ? timing.dueAfterDays : 14) })),
    h("label", {}, "Grace period (days, due date)",
      h("input", { type: "number", name: "paymentTiming.gracePeriodDays", "data-field": "paymentTiming.gracePeriodDays",
        value: String(timing.mode === "due_date" ? timing.gracePeriodDays : 0) })), h("h2", {}, "Payment methods"), methods,
    h("button", { type: "button", onclick: () => methods.append(methodRow({ network: "arbitrum", assetCode: "USDT", railType: "address_transfer" }, methods.children.length)) },
      "Add a method"), h("h2", {}, "Embedded checkout"),
    h("label", {}, "Shop origins that may show the payment page in a frame (one per line, such as https://shop.example)",
      h("textarea", { name: "embedOrigins", "data-field": "embedOrigins", rows: "3" }, settings.embedOrigins.join("\n"))),
    h("button", { type: "submit" }, "Save settings")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const data = new FormData(form)
    const text = (name: string) => {
      const value = String(data.get(name) ?? "").trim()
      return value === "" ? null : value
    }
    const mode = text("paymentTiming.mode")
    const fieldsets = [...methods.querySelectorAll("fieldset")]
    // Field names follow the rows as they are now (rows may have been removed).
    fieldsets.forEach((fieldset, index) => {
      for (const element of fieldset.querySelectorAll<HTMLElement>("[name], [data-field]")) {
        for (const attribute of ["name", "data-field"]) {
          const value = element.getAttribute(attribute)
          if (value !== null && value.startsWith("paymentMethods[")) element.setAttribute(attribute, value.replace(/^paymentMethods\[\d+\]/, `paymentMethods[${index}]`))
        }
        if (element.getAttribute("type") === "radio") element.setAttribute("value", String(index))
      }
    })
    const fresh = new FormData(form)
    const body = {
      issuedBy: text("issuedBy"),
      paymentTiming: mode === "due_date"
        ? { mode, dueAfterDays: Number(fresh.get("paymentTiming.dueAfterDays")), gracePeriodDays: Number(fresh.get("paymentTiming.gracePeriodDays")) }
        : { mode, expiresAfterMinutes: Number(fresh.get("paymentTiming.expiresAfterMinutes")) },
      paymentMethods: fieldsets.map((_, index) => {
        const field = (name: string) => {
          const value = String(fresh.get(`paymentMethods[${index}].${name}`) ?? "").trim()
          return value === "" ? null : value
        }
        return {
          network: field("network"),
          assetCode: field("assetCode"),
          railType: field("railType"),
          recipientAddress: field("recipientAddress"),
          xpub: field("xpub"),
          startIndex: field("startIndex") === null ? null : Number(field("startIndex")),
          enabled: fresh.get(`paymentMethods[${index}].enabled`) !== null,
          isDefault: fresh.get("defaultMethod") === String(index)
        }
      }),
      embedOrigins: String(fresh.get("embedOrigins") ?? "").split("\n").map((line) => line.trim()).filter((line) => line !== "")
    }
    const saved = await api<CheckoutSettings>("PUT", inMode("/api/dashboard/checkout-settings"), body)
    warnings.replaceChildren(...saved.warnings.map((warning) => notice(warning)))
    form.prepend(notice("Settings saved.", "ok"))
  }))
  show(h("h1", {}, viewingTestData() ? "Checkout settings (test mode)" : "Checkout settings"), hint, warnings, form)
}
