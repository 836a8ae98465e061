/**
 * The merchant dashboard: a small single-page app over the service's own JSON API (same origin,
 * session cookie, CSRF token echoed on writes). No framework: native forms, buttons and links keep
 * it keyboard accessible; hash routes keep every view linkable.
 */

import type { WebhookEventName } from "../../domain/Statuses.ts"
import { endpointVariable } from "../../config/EndpointVariables.ts"
import { CLOSE_ACTION_WORDS, eventWords, STATUS_WORDS, stateWords } from "../Words.ts"
import type {
  ApiKey,
  AuthAnswer,
  ChainEndpoint,
  CloseAction,
  ChainWatcher,
  ChainWatcherList,
  CheckoutSettings,
  CreatedKey,
  CreatedSecret,
  Delivery,
  DeliveryPage,
  Invoice,
  InvoiceDetail,
  InvoicePage,
  InvoiceSummary,
  KeyList,
  Payment,
  PaymentMethod,
  TestResult,
  UnmatchedDeposits,
  WebhookSettings
} from "./Api.ts"
import { paymentPageLink, transactionLink } from "./Links.ts"
import { inMode, viewingTestData, wireModeSwitch } from "./Mode.ts"
import { newInvoiceView } from "./NewInvoice.ts"
import { overviewView } from "./OverviewView.ts"
import { invoiceRefunds, refundsView } from "./Refunds.ts"
import { chartFigure, exceptionTrail, lifecycleCharts, statusTrail, trailSteps } from "./Chart.ts"
import { api, ApiError, cardTable, copyButton, h, notice, select, show, statusBadge, submitting, Superseded, usd, userId, when } from "./Ui.ts"

const nav = document.getElementById("nav")!

const exceptionText = (invoice: Pick<InvoiceSummary, "exceptionType" | "exceptionStatus">) =>
  invoice.exceptionType === null ? "—" : `${stateWords(invoice.exceptionType)} (${invoice.exceptionStatus})`

// ---------------------------------------------------------------- sign-up, login, logout

const authView = (mode: "login" | "signup") => {
  const form = h("form", { class: "card narrow" }, h("h1", {}, mode === "login" ? "Log in" : "Create your merchant account"),
    h("label", {}, "Email", h("input", { name: "email", type: "email", autocomplete: "email", required: true, "data-field": "email" })),
    h("label", {}, "Password",
      h("input", { name: "password", type: "password", autocomplete: mode === "login" ? "current-password" : "new-password", required: true, "data-field": "password" })),
    h("button", { type: "submit" }, mode === "login" ? "Log in" : "Sign up"),
    h("p", {}, mode === "login" ? h("a", { href: "#/signup" }, "Create an account") : h("a", { href: "#/login" }, "I have an account"))) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const data = new FormData(form)
    const result = await api<AuthAnswer>("POST", `/api/auth/${mode}`, { email: data.get("email"), password: data.get("password") })
    localStorage.setItem("checkout.userId", result.user.id)
    localStorage.setItem("checkout.email", result.user.email)
    location.hash = mode === "signup" ? "#/settings" : "#/overview"
  }))
  show(form)
}

const logout = async () => {
  await api("POST", "/api/auth/logout").catch(() => undefined)
  localStorage.removeItem("checkout.userId")
  location.hash = "#/login"
}

// ---------------------------------------------------------------- invoices

const STATUSES = Object.keys(STATUS_WORDS)

const invoiceTable = (invoices: ReadonlyArray<InvoiceSummary>) =>
  cardTable(["Invoice", "Status", "Amount", "Received", "Created", "Reference", "Exception"], invoices.map((invoice) =>
    h("tr", { "data-invoice": invoice.id }, h("td", { class: "title" }, h("a", { href: `#/invoices/${invoice.id}` }, invoice.productName ?? invoice.id.slice(0, 8))),
      h("td", { class: "badge" }, statusBadge(invoice.status)), h("td", { class: "number amount" }, usd(invoice.amountUsd)),
      h("td", { class: "number" }, usd(invoice.receivedAmountUsd)), h("td", {}, when(invoice.createdAt)), h("td", {}, invoice.merchantReference ?? "—"),
      h("td", {}, exceptionText(invoice)))
  ))

const invoicesView = async (params: URLSearchParams) => {
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
  show(h("h1", {}, "Invoices"), filters,
    h("p", {}, h("a", { href: "#/invoices/new", class: "button" }, "New invoice"),
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
const closeExceptionForm = (invoice: Pick<InvoiceSummary, "id">, actions: ReadonlyArray<CloseAction>, after: () => void) => {
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

const BASIS_WORDS = { sources: "median of sources", par: "1:1 (par)", fixed: "fixed demo rate" } as const

/** What each asset's rate rested on: the price sources used (with their prices), their spread, those left out and why. */
const quotesSection = (quotes: InvoiceDetail["quotes"]) => {
  if (quotes.length === 0) return null
  const sourcesText = (quote: InvoiceDetail["quotes"][number]) => quote.sources.map((source) => `${source.source} ${source.priceUsd}`).join(", ") || "—"
  const leftOutText = (quote: InvoiceDetail["quotes"][number]) => quote.leftOut.map((source) => `${source.source} (${source.reason})`).join(", ") || "—"
  const rows = quotes.map((quote) =>
    h("tr", { "data-asset": quote.assetCode }, h("td", {}, quote.assetCode), h("td", { class: "number" }, quote.rateUsd), h("td", {}, BASIS_WORDS[quote.basis]),
      h("td", { class: "number" }, quote.sources.length > 1 ? quote.spread : "—"), h("td", {}, sourcesText(quote)), h("td", {}, leftOutText(quote)))
  )
  return h("section", { "data-section": "quotes" }, h("h2", {}, "Quotes"), cardTable(["Asset", "Rate (USD)", "Basis", "Spread", "Sources used", "Left out"], rows))
}

/** Which of two offered actions settles a late payment: the chain's money is taken by closing the exception. */
const LATE_PAYMENT_HINT = () =>
  h("p", { class: "hint", "data-hint": "late-payment" }, "The payment reached the chain after the invoice expired: take it with Close exception → ",
    `“${CLOSE_ACTION_WORDS.accept_late_payment}”. Use Record payment only for money received outside the service (a bank transfer, cash).`)

/** What the merchant can do to the invoice now: void, record a payment made elsewhere, close its exception. */
const invoiceActions = (invoice: Invoice, closeActions: ReadonlyArray<CloseAction>, reload: () => void) => {
  const actions: Array<Node> = []
  if (invoice.status === "awaiting_payment") {
    actions.push(h("button", { type: "button", onclick: async () => {
      if (!confirm("Void this invoice?")) return
      const failure = await api("POST", `/api/checkout/invoices/${invoice.id}/void`, {}).then(() => undefined, (error: Error) => error)
      if (failure instanceof Superseded) return
      if (failure !== undefined) alert(failure.message)
      reload()
    } }, "Void"))
  }
  if (["awaiting_payment", "partially_paid", "expired"].includes(invoice.status)) {
    const form = h("form", { class: "inline-form" },
      h("label", {}, "Paid outside the service: note", h("input", { name: "note", required: true, maxlength: "2000", "data-field": "note" })),
      h("button", { type: "submit" }, "Record payment")) as HTMLFormElement
    form.addEventListener("submit", submitting(form, async () => {
      await api("POST", `/api/checkout/invoices/${invoice.id}/record-payment`, { note: new FormData(form).get("note") })
      reload()
    }))
    actions.push(form)
  }
  if (invoice.exceptionStatus === "open" && closeActions.length > 0) actions.push(closeExceptionForm(invoice, closeActions, reload))
  if (invoice.status === "expired" && invoice.exceptionStatus === "open" && closeActions.includes("accept_late_payment")) actions.unshift(LATE_PAYMENT_HINT())
  return actions.length === 0 ? null : h("section", { class: "actions" }, h("h2", {}, "Actions"), ...actions)
}

const invoiceFacts = (invoice: Invoice) =>
  h("dl", { class: "facts" }, ...([
    ["Invoice", invoice.id],
    ["Status", statusBadge(invoice.status)],
    ["Amount", usd(invoice.amountUsd)],
    ["Received", usd(invoice.receivedAmountUsd)],
    ["Confirmed", usd(invoice.confirmedAmountUsd)],
    ["Reference", invoice.merchantReference ?? "—"],
    ["Customer", invoice.customerEmail ?? "—"],
    ["Payable until", when(invoice.paymentTiming.payableUntilAt)],
    ["Payment page", paymentPageLink(invoice.paymentUrl)],
    ["Overpaid", invoice.paymentSummary.overpaymentAmountUsd > 0 ? usd(invoice.paymentSummary.overpaymentAmountUsd) : "—"],
    ["Exception", `${exceptionText(invoice)}${invoice.exceptionNote ? `: ${invoice.exceptionNote}` : ""}`],
    ["Paid outside the service", invoice.paidOutOfBandAt === null ? "—" : `${when(invoice.paidOutOfBandAt)}: ${invoice.paidOutOfBandNote ?? ""}`]
  ] as const).flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]))

const paymentsSection = (payments: ReadonlyArray<Payment>) =>
  payments.length === 0 ?
    h("p", {}, "No payment yet.") :
    cardTable(["Observed", "Network", "Amount", "Confirmations", "Transaction"], payments.map((payment) =>
      h("tr", { class: payment.invalidatedAt === null ? "" : "invalidated" }, h("td", {}, when(payment.observedAt)), h("td", {}, `${payment.network} ${payment.assetCode}`),
        h("td", { class: "number" }, `${payment.amountReceived} ${payment.assetCode}`), h("td", { class: "number" }, String(payment.confirmations)),
        h("td", { class: "mono" }, payment.transactionHash === null ? "—" : transactionLink(payment.network, payment.transactionHash),
          payment.invalidatedAt === null ? "" : ` (removed: ${payment.invalidationReason ?? "reorganisation"})`))
    ))

const unmatchedSection = (unmatched: UnmatchedDeposits) =>
  unmatched.data.length === 0 ?
    null :
    h("section", {}, h("h2", {}, "Unmatched deposits (not counted)"),
      h("p", {}, "Transfers to this invoice's address that match none of its payment options, e.g. the wrong token or network."),
      cardTable(["Detected", "Network", "Token", "Amount (smallest unit)", "Reason", "Transaction"], unmatched.data.map((deposit) =>
        h("tr", {}, h("td", {}, when(deposit.detectedAt)), h("td", {}, deposit.network), h("td", { class: "mono" }, deposit.tokenContract ?? "—"),
          h("td", { class: "number" }, deposit.amountAtomic), h("td", {}, deposit.invalidatedAt === null ? deposit.reason : `${deposit.reason} (removed by a reorganisation)`),
          h("td", { class: "mono" }, transactionLink(deposit.network, deposit.transactionHash)))
      )))

/** The invoice's outbox events in words, oldest first (the API's name kept for the curious). */
const timelineList = (timeline: InvoiceDetail["timeline"]) =>
  h("ol", { class: "timeline" }, ...timeline.map((entry) =>
    h("li", { "data-event": entry.event }, h("time", { datetime: entry.at }, when(entry.at)), " ", eventWords(entry.event))
  ))

const invoiceView = async (id: string, params: URLSearchParams) => {
  const [{ invoice, closeActions, timeline, deliveries, quotes }, unmatched, refunds] = await Promise.all([
    api<InvoiceDetail>("GET", `/api/dashboard/invoices/${id}`),
    api<UnmatchedDeposits>("GET", `/api/dashboard/invoices/${id}/unmatched-deposits`),
    // The invoice is shown even when its refunds cannot be read.
    invoiceRefunds(id, () => void invoiceView(id, new URLSearchParams())).catch((error: Error) => {
      if (error instanceof Superseded) throw error
      return h("section", { "data-section": "refunds" }, h("h2", {}, "Refunds"), notice(error.message))
    })
  ])
  const reload = () => void invoiceView(id, new URLSearchParams())
  show(
    h("p", {}, h("a", { href: "#/invoices" }, "← Invoices")),
    h("h1", {}, invoice.productName ?? "Invoice"),
    params.has("created") ? notice("Invoice created. Send the payment page to your customer.", "ok") : null,
    invoiceFacts(invoice),
    invoiceActions(invoice, closeActions, reload),
    h("h2", {}, "Payments"),
    paymentsSection(invoice.payments ?? []),
    quotesSection(quotes),
    refunds,
    unmatchedSection(unmatched),
    h("h2", {}, "Timeline"),
    timelineList(timeline),
    h("h2", {}, "Path through the lifecycle"),
    ...invoicePath(invoice, timeline),
    h("h2", {}, "Webhook deliveries"),
    deliveries.length === 0 ? h("p", {}, "None.") : deliveryTable(deliveries, reload)
  )
}

/** What tells two look-alike cards apart: the order reference, the invoice's short id and its creation time. */
const exceptionCardFacts = (invoice: InvoiceSummary) =>
  h("p", { class: "facts" }, `Order ${invoice.merchantReference ?? "—"} · Invoice `, h("code", { class: "mono", "data-short-id": "" }, invoice.id.slice(0, 8)), " · Created ",
    h("time", { datetime: invoice.createdAt }, when(invoice.createdAt)))

const exceptionsView = async () => {
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

// ---------------------------------------------------------------- API keys

const keysView = async (created?: CreatedKey) => {
  const base = `/api/users/${userId()}`
  const { keys } = await api<KeyList>("GET", `${base}/checkout-api-keys`)
  const form = h("form", { class: "inline-form" }, h("label", {}, "Label", h("input", { name: "label", maxlength: "100", "data-field": "label" })),
    h("button", { type: "submit" }, "Create API key")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const key = await api<CreatedKey>("POST", `${base}/checkout-api-key`, { label: new FormData(form).get("label") })
    await keysView(key)
  }))
  show(h("h1", {}, "API keys"),
    h("p", {}, "Keys call the five invoice endpoints from your server. At most 3 are active at once: revoke one to create another. A key is shown only when it is created."),
    created === undefined ?
      null :
      h("div", { class: "card secret", role: "status" }, h("p", {}, "Your new key (copy it now: it is not shown again):"),
        h("code", { class: "mono", id: "new-key" }, created.rawKey), copyButton(created.rawKey)), form,
    cardTable(["Prefix", "Label", "Created", ""],
      keys.map((key: ApiKey) =>
        h("tr", { "data-key": key.id }, h("td", { class: "mono title" }, `${key.keyPrefix}…`), h("td", {}, key.label), h("td", {}, when(key.createdAt)),
          h("td", { class: "row-actions" }, h("button", { type: "button", onclick: async () => {
            if (!confirm(`Revoke ${key.keyPrefix}…? Requests with it fail at once.`)) return
            await api("DELETE", `${base}/checkout-api-key/${key.id}`)
            await keysView()
          } }, "Revoke")))
      )))
}

// ---------------------------------------------------------------- checkout settings and payment methods

const NETWORKS = ["ethereum", "arbitrum", "base", "solana", "bitcoin"]

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

const settingsView = async () => {
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

// ---------------------------------------------------------------- webhooks

/** The server's event names, in the spec's order: a name the server does not know fails the type check. */
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

const deliveryTable = (deliveries: ReadonlyArray<Delivery>, after: () => void) =>
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

const webhooksView = async (params: URLSearchParams, secret?: string) => {
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

// ---------------------------------------------------------------- lifecycle

const REGION_CAPTIONS: Record<string, string> = {
  status: "Statechart of the invoice statuses",
  exception: "Statechart of the merchant's review of exceptions"
}

const lifecycleView = async () => {
  const charts = await lifecycleCharts()
  show(h("h1", {}, "Invoice lifecycle"),
    h("p", {}, "Every status an invoice can take and what moves it, drawn from the service's statechart. The two regions run side by side: ",
      "an invoice has a status and, at the same time, an exception state. Hover or focus an arrow for its guard and effects; zoom and drag to read it on a phone."),
    ...charts.map((chart) => chartFigure(chart, REGION_CAPTIONS[chart.region] ?? `Statechart region ${chart.region}`)))
}

/**
 * The invoice's own path: the statuses it went through (and its exceptions, if any) in words, and
 * the same path on the statechart, folded until asked for (the charts are tall; their layout is
 * fetched when first opened).
 */
const invoicePath = (invoice: Invoice, timeline: InvoiceDetail["timeline"]) => {
  const trails = [
    { region: "status", trail: statusTrail(invoice, timeline) },
    ...(invoice.exceptionType === null ? [] : [{ region: "exception", trail: exceptionTrail(invoice, timeline) }])
  ]
  const caption = (region: string) => REGION_CAPTIONS[region] ?? region
  const lists = trails.map(({ region, trail }) =>
    h("ol", { class: "path", start: "0", "aria-label": `${caption(region)}: this invoice's path` }, ...trailSteps(trail, when).map((step) => h("li", {}, step)))
  )
  const fold = h("details", { class: "statechart-fold" }, h("summary", {}, "Show the path on the statechart")) as HTMLDetailsElement
  fold.addEventListener("toggle", () => {
    if (!fold.open || fold.dataset.drawn !== undefined) return
    fold.dataset.drawn = ""
    void lifecycleCharts().then((charts) => {
      for (const { region, trail } of trails) {
        const chart = charts.find((candidate) => candidate.region === region)
        if (chart !== undefined) fold.append(chartFigure(chart, `${caption(region)}, with this invoice's path`, trail))
      }
    }, (error: Error) => fold.append(notice(error.message)))
  })
  return [...lists, fold]
}

// ---------------------------------------------------------------- chain watchers

/** An endpoint's state in words, in its colour: "Rate-limited until 12:00:05". */
const endpointBadge = (endpoint: ChainEndpoint) => {
  const words = {
    healthy: "Healthy",
    lagging: "Lagging",
    rate_limited: `Rate-limited until ${when(endpoint.retryAt)}`,
    failing: endpoint.retryAt === null ? "Failing" : `Failing, retried after ${when(endpoint.retryAt)}`,
    disagreeing: endpoint.disagreesAt !== null
      ? `Disagreeing at height ${endpoint.disagreesAt}`
      : (endpoint.refusedTransfers ?? 0) > 0
      ? `Disagreeing: ${endpoint.refusedTransfers} transfer(s) the others deny`
      : "Disagreeing"
  } satisfies Record<ChainEndpoint["state"], string>
  return h("span", { class: `status endpoint-${endpoint.state}`, "data-state": endpoint.state }, words[endpoint.state])
}

const networkName = (network: string) => network.charAt(0).toUpperCase() + network.slice(1)

const watcherFacts = (watcher: ChainWatcher) => {
  const lag = watcher.lagSeconds === null ? "—" : `${Math.round(watcher.lagSeconds)} s`
  const error = watcher.lastError === null ? "None" : `${watcher.lastError} (${when(watcher.lastErrorAt)})`
  return h("dl", { class: "facts" }, h("dt", {}, "Processed up to"), h("dd", {}, watcher.processedHeight ?? "—"), h("dt", {}, "Head"), h("dd", {}, watcher.headHeight ?? "—"),
    h("dt", {}, "Behind the head"), h("dd", {}, lag), h("dt", {}, "Last error"), h("dd", {}, error))
}

const endpointRow = (endpoint: ChainEndpoint) =>
  h("tr", { "data-endpoint": endpoint.endpoint }, h("td", { class: "title mono" }, endpoint.endpoint), h("td", { class: "badge" }, endpointBadge(endpoint)),
    h("td", {}, endpoint.inUse ? "In use" : "—"), h("td", { class: "number" }, endpoint.headHeight ?? "—"), h("td", { class: "mono" }, endpoint.lastError ?? "—"))

/** A network without a watcher, and the variable that gives it one (the configuration's own rule). */
const notWatched = (network: string) => {
  const kind = network === "bitcoin" ? "an Esplora API's URL" : "JSON-RPC endpoint URLs"
  return h("p", { class: "not-watched" }, "Not watched: no endpoint is configured. To watch it, set ", h("code", { class: "variable" }, endpointVariable(network)),
    ` to ${kind} (a comma-separated list, preferred first) and restart the service.`)
}

const watcherCard = (watcher: ChainWatcher) => {
  const heading = h("h2", {}, networkName(watcher.network))
  if (!watcher.configured) return h("section", { class: "card", "data-network": watcher.network }, heading, notWatched(watcher.network))
  const disagreement = watcher.disagreementHeight === null
    ? null
    : notice(`The endpoints disagree about the block at height ${watcher.disagreementHeight} with no majority: the watcher waits below it.`)
  const waiting = watcher.awaitingCorroboration
  const corroboration = waiting === undefined || waiting.payments === 0 ? null : notice(
    `${waiting.payments} payment(s) wait for another endpoint to corroborate them (${waiting.disputed} disputed) since ${waiting.since ?? "now"}: ` +
      "detected at 0 confirmations, never confirmed until a majority of the endpoints shows them. Add an endpoint to settle a dispute."
  )
  const endpoints = watcher.endpoints.length === 0
    ? h("p", {}, "No endpoint state yet: the watcher publishes it after its first poll.")
    : cardTable(["Endpoint", "State", "In use", "Head", "Last error"], watcher.endpoints.map(endpointRow))
  return h("section", { class: "card", "data-network": watcher.network }, heading, watcherFacts(watcher), disagreement, corroboration, endpoints)
}

const chainWatchersView = async () => {
  const { watchers } = await api<ChainWatcherList>("GET", "/api/dashboard/chain-watchers")
  show(h("h1", {}, "Chain watchers"),
    h("p", {}, "Each network's watcher and its endpoints, preferred first: the one in use is the first that answers, is not backing off and is not lagging."),
    ...[...watchers].sort((a, b) => Number(b.configured) - Number(a.configured)).map(watcherCard))
}

// ---------------------------------------------------------------- routing

const routes: Array<[RegExp, (match: RegExpExecArray, params: URLSearchParams) => void | Promise<void>]> = [
  [/^\/login$/, () => authView("login")],
  [/^\/signup$/, () => authView("signup")],
  [/^\/overview$/, () => overviewView()],
  [/^\/invoices$/, (_, params) => invoicesView(params)],
  [/^\/invoices\/new$/, () => newInvoiceView()],
  [/^\/invoices\/([0-9a-f-]{36})$/, (match, params) => invoiceView(match[1], params)],
  [/^\/exceptions$/, () => exceptionsView()],
  [/^\/keys$/, () => keysView()],
  [/^\/settings$/, () => settingsView()],
  [/^\/webhooks$/, (_, params) => webhooksView(params)],
  [/^\/lifecycle$/, () => lifecycleView()],
  [/^\/chain-watchers$/, () => chainWatchersView()],
  [/^\/refunds$/, (_, params) => refundsView(params)]
]

const route = async () => {
  const [path, query = ""] = (location.hash.slice(1) || (userId() === "" ? "/login" : "/overview")).split("?")
  const signedIn = userId() !== ""
  nav.hidden = !signedIn || path === "/login" || path === "/signup"
  for (const link of nav.querySelectorAll("a")) {
    if (link.getAttribute("href") === `#${path}`) link.setAttribute("aria-current", "page")
    else link.removeAttribute("aria-current")
  }
  for (const [pattern, view] of routes) {
    const match = pattern.exec(path)
    if (match === null) continue
    try {
      await view(match, new URLSearchParams(query))
    } catch (error) {
      if (!(error instanceof Superseded) && (error as ApiError).status !== 401) show(h("h1", {}, "Something went wrong"), notice((error as Error).message))
    }
    return
  }
  show(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/invoices" }, "Go to invoices")))
}

document.getElementById("logout")!.addEventListener("click", () => void logout())
window.addEventListener("hashchange", () => void route())
wireModeSwitch(() => void route())
void route()
