/** Webhook settings, the signing secret, the test event and the searchable delivery log. */

import type { WebhookEventName } from "../../domain/Statuses.ts"
import type { CreatedSecret, Delivery, DeliveryPage, TestResult, WebhookSettings } from "./Api.ts"
import { inMode } from "./Mode.ts"
import { api, cardTable, copyButton, h, notice, select, show, submitting, Superseded, when } from "./Ui.ts"

/** The server's event names, in the spec's order: a name the server does not know, or one left out, fails the type check. */
const EVENTS = {
  invoice_created: true,
  invoice_partially_paid: true,
  invoice_payment_detected: true,
  invoice_confirmed: true,
  invoice_expired: true,
  invoice_voided: true,
  invoice_payment_recorded: true,
  invoice_exception_opened: true,
  invoice_exception_closed: true,
  // Issue #40's refund events: opt-in (a merchant without saved settings gets the nine above).
  refund_requested: true,
  refund_completed: true,
  refund_rejected: true
} satisfies Record<WebhookEventName, true>
const EVENT_NAMES = Object.keys(EVENTS)

export const deliveryTable = (deliveries: ReadonlyArray<Delivery>, after: () => void) =>
  cardTable(["Event", "Status", "Created", "Invoice", "Attempts", "Last code", ""], deliveries.map((delivery) =>
    h("tr", { "data-delivery": delivery.id }, h("td", { class: "title" }, delivery.event),
      h("td", { class: "badge" }, h("span", { class: `status ${delivery.status}` }, delivery.status)), h("td", {}, when(delivery.createdAt)),
      h("td", {}, h("a", { href: `#/invoices/${delivery.invoiceId}` }, delivery.invoiceId.slice(0, 8))), h("td", { class: "number" }, String(delivery.attempts.length)),
      h("td", { class: "number" }, delivery.lastStatusCode === null ? "—" : String(delivery.lastStatusCode)),
      h("td", { class: "row-actions" }, h("button", { type: "button", onclick: async () => {
        const failure = await api<Delivery>("POST", `/api/dashboard/webhook-deliveries/${delivery.id}/redeliver`).then(() =>
          undefined, (error: Error) => error)
        if (failure instanceof Superseded) return
        if (failure !== undefined) alert(failure.message)
        after()
      } }, "Redeliver")))
  ))

export const webhooksView = async (params: URLSearchParams, secret?: string) => {
  const settings = await api<WebhookSettings>("GET", inMode("/api/dashboard/webhook-settings"))
  const form = h("form", { class: "card" },
    h("label", {}, "Endpoint URL", h("input", { type: "url", name: "url", "data-field": "url", value: settings.url ?? "", placeholder: "https://shop.example/webhooks" })),
    h("fieldset", {}, h("legend", {}, "Events"),
      ...EVENT_NAMES.map((event) =>
        h("label", { class: "check" }, h("input", { type: "checkbox", name: "enabledEvents", value: event, checked: settings.enabledEvents.includes(event) }), event)
      )), h("button", { type: "submit" }, "Save webhook settings")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const data = new FormData(form)
    const url = String(data.get("url") ?? "").trim()
    await api("PUT", inMode("/api/dashboard/webhook-settings"), { url: url === "" ? null : url, enabledEvents: data.getAll("enabledEvents") })
    form.prepend(notice("Webhook settings saved.", "ok"))
  }))
  const search = h("form", { class: "filters", role: "search" },
    h("label", {}, "Search", h("input", { type: "search", name: "q", value: params.get("q") ?? "", placeholder: "delivery, invoice, event, URL or code" })),
    select("status", "Status", ["pending", "delivered", "failed"], params.get("status") ?? ""), select("event", "Event", EVENT_NAMES, params.get("event") ?? ""),
    h("button", { type: "submit" }, "Search")) as HTMLFormElement
  search.addEventListener("submit", (event) => {
    event.preventDefault()
    const query = new URLSearchParams()
    for (const [name, value] of new FormData(search)) if (value !== "") query.set(name, String(value))
    location.hash = `#/webhooks?${query}`
  })
  const query = new URLSearchParams([...params].filter(([, value]) => value !== ""))
  const log = await api<DeliveryPage>("GET", inMode(`/api/dashboard/webhook-deliveries?${query}`))
  show(h("h1", {}, "Webhooks"), form,
    h("section", { class: "card" }, h("h2", {}, "Signing secret"),
      h("p", {}, settings.hasSecret ? "A secret is set. Rotating it replaces it at once." : "No secret yet: deliveries fail until one exists."), secret === undefined
      ? null
      : h("p", { role: "status" }, "New secret (copy it now: it is not shown again): ", h("code", { class: "mono", id: "new-secret" }, secret), copyButton(secret)),
      h("button", { type: "button", onclick: async () => {
        const created = await api<CreatedSecret>("POST", inMode("/api/dashboard/webhook-settings/secret"))
        await webhooksView(params, created.secret)
      } }, settings.hasSecret ? "Rotate secret" : "Create secret"), h("button", { type: "button", onclick: async (event: Event) => {
        const result = await api<TestResult>("POST", inMode("/api/dashboard/webhook-settings/test"))
        const text = result.ok ? `Test event delivered: HTTP ${result.statusCode} in ${result.durationMs} ms` : `Test event not delivered: ${result.error}`
        ;(event.target as HTMLElement).after(notice(text, result.ok ? "ok" : "error"))
      } }, "Send a test event")), h("h2", {}, "Delivery log"), search,
    log.deliveries.length === 0 ? h("p", {}, "No deliveries.") : deliveryTable(log.deliveries, () => void webhooksView(params)))
}
