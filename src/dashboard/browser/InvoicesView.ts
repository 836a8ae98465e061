/** The invoice list (filters, cursor pages, CSV export) and the exception queue, in the mode shown (Mode.ts). */

import { CLOSE_ACTION_WORDS, STATUS_WORDS, stateWords } from "../Words.ts"
import type { CloseAction, InvoicePage, InvoiceSummary } from "./Api.ts"
import { inMode, viewingTestData } from "./Mode.ts"
import { api, cardTable, h, select, show, statusBadge, submitting, usd, when } from "./Ui.ts"

export const exceptionText = (invoice: Pick<InvoiceSummary, "exceptionType" | "exceptionStatus">) =>
  invoice.exceptionType === null ? "—" : `${stateWords(invoice.exceptionType)} (${invoice.exceptionStatus})`

const STATUSES = Object.keys(STATUS_WORDS)

const invoiceTable = (invoices: ReadonlyArray<InvoiceSummary>) =>
  cardTable(["Invoice", "Status", "Amount", "Received", "Created", "Reference", "Exception"], invoices.map((invoice) =>
    h("tr", { "data-invoice": invoice.id }, h("td", { class: "title" }, h("a", { href: `#/invoices/${invoice.id}` }, invoice.productName ?? invoice.id.slice(0, 8))),
      h("td", { class: "badge" }, statusBadge(invoice.status)), h("td", { class: "number amount" }, usd(invoice.amountUsd)),
      h("td", { class: "number" }, usd(invoice.receivedAmountUsd)), h("td", {}, when(invoice.createdAt)), h("td", {}, invoice.merchantReference ?? "—"),
      h("td", {}, exceptionText(invoice)))
  ))

export const invoicesView = async (params: URLSearchParams) => {
  const filters = h("form", { class: "filters", role: "search" }, select("status", "Status", STATUSES, params.get("status") ?? "", "any", stateWords),
    select("exceptionStatus", "Exception", ["open", "closed"], params.get("exceptionStatus") ?? ""),
    h("label", {}, "Created from", h("input", { type: "date", name: "createdFrom", value: params.get("createdFrom") ?? "" })),
    h("label", {}, "Created before", h("input", { type: "date", name: "createdTo", value: params.get("createdTo") ?? "" })),
    h("label", {}, "Search", h("input", { type: "search", name: "q", placeholder: "id, reference or email", value: params.get("q") ?? "" })),
    h("button", { type: "submit" }, "Filter")) as HTMLFormElement
  filters.addEventListener("submit", (event) => {
    event.preventDefault()
    const query = new URLSearchParams()
    for (const [name, value] of new FormData(filters)) if (value !== "") query.set(name, String(value))
    location.hash = `#/invoices?${query}`
  })
  const query = new URLSearchParams([...params].filter(([, value]) => value !== ""))
  const body = h("div", {}, h("p", {}, "Loading…"))
  show(h("h1", {}, "Invoices"), filters, // The dashboard's "New invoice" makes live invoices; test invoices come from a test API key.
    h("p", {},
      viewingTestData() ? h("span", { class: "hint" }, "Test invoices are created with a test API key. ") : h("a", { href: "#/invoices/new", class: "button" }, "New invoice"),
      h("a", { href: inMode(`/api/dashboard/exports/invoices.csv?${query}`), download: "invoices.csv", class: "button" }, "Export CSV")), body)
  const load = async (cursor: string | null, into: HTMLElement) => {
    const page = await api<InvoicePage>("GET", inMode(`/api/dashboard/invoices?${query}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`))
    into.replaceChildren(
      page.invoices.length === 0 && cursor === null ? h("p", {}, "No invoices match.") : invoiceTable(page.invoices),
      page.nextCursor === null ? "" : h("button", { type: "button", onclick: () => {
        const more = h("div", {})
        into.lastElementChild!.replaceWith(more)
        void load(page.nextCursor, more)
      } }, "More")
    )
  }
  await load(null, body)
}

/**
 * Closes an open exception with one of `actions`: those the server accepts for it now (the API's
 * `closeActions`, by the lifecycle's own rule). None is chosen for the merchant when there are several.
 */
export const closeExceptionForm = (invoice: Pick<InvoiceSummary, "id">, actions: ReadonlyArray<CloseAction>, after: () => void) => {
  const choose = actions.length === 1 ? [] : [h("option", { value: "" }, "Choose an action")]
  const form = h("form", { class: "inline-form", "data-close-actions": actions.join(" ") },
    h("label", {}, "Close with",
      h("select", { name: "action", "data-field": "action", required: true }, ...choose, ...actions.map((action) => h("option", { value: action }, CLOSE_ACTION_WORDS[action])))),
    h("label", {}, "Note (required)", h("input", { name: "note", required: true, maxlength: "2000", "data-field": "note" })),
    h("button", { type: "submit" }, "Close exception")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const data = new FormData(form)
    await api("POST", `/api/dashboard/invoices/${invoice.id}/exception/close`, { action: data.get("action"), note: data.get("note") })
    after()
  }))
  return form
}

/** What tells two look-alike cards apart: the order reference, the invoice's short id and its creation time. */
const exceptionCardFacts = (invoice: InvoiceSummary) =>
  h("p", { class: "facts" }, `Order ${invoice.merchantReference ?? "—"} · Invoice `, h("code", { class: "mono", "data-short-id": "" }, invoice.id.slice(0, 8)), " · Created ",
    h("time", { datetime: invoice.createdAt }, when(invoice.createdAt)))

export const exceptionsView = async () => {
  const page = await api<InvoicePage>("GET", inMode("/api/dashboard/invoices?exceptionStatus=open&limit=200"))
  show(h("h1", {}, "Exceptions to review"), page.invoices.length === 0 ?
    h("p", {}, "Nothing to review.") :
    h("ul", { class: "queue" },
      ...page.invoices.map((invoice) =>
        h("li", { class: "card" },
          h("p", {}, h("a", { href: `#/invoices/${invoice.id}` }, invoice.productName ?? invoice.id), ` — ${stateWords(invoice.exceptionType ?? "exception")}, `,
            `${usd(invoice.receivedAmountUsd)} received of ${usd(invoice.amountUsd)}, `, statusBadge(invoice.status)), exceptionCardFacts(invoice),
          closeExceptionForm(invoice, invoice.closeActions, () => void exceptionsView()))
      )))
}
