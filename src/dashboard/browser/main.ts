/**
 * The merchant dashboard: a small single-page app over the service's own JSON API (same origin,
 * session cookie, CSRF token echoed on writes). No framework: native forms, buttons and links keep
 * it keyboard accessible; hash routes keep every view linkable. One module per view; this one routes.
 */

import { authView, logout } from "./Auth.ts"
import { chainWatchersView } from "./ChainWatchersView.ts"
import { exceptionsView, invoicesView } from "./InvoicesView.ts"
import { invoiceView } from "./InvoiceView.ts"
import { keysView } from "./KeysView.ts"
import { lifecycleView } from "./LifecycleView.ts"
import { wireModeSwitch } from "./Mode.ts"
import { newInvoiceView } from "./NewInvoice.ts"
import { overviewView } from "./OverviewView.ts"
import { refundsView } from "./Refunds.ts"
import { settingsView } from "./SettingsView.ts"
import { type ApiError, h, notice, show, Superseded, userId } from "./Ui.ts"
import { webhooksView } from "./WebhooksView.ts"

const nav = document.getElementById("nav")!

type View = (params: URLSearchParams) => void | Promise<void>

/** Each view by its hash path; an invoice's page is the one path with a parameter. */
const VIEWS = new Map<string, View>([
  ["/login", () => authView("login")],
  ["/signup", () => authView("signup")],
  ["/overview", () => overviewView()],
  ["/invoices", (params) => invoicesView(params)],
  ["/invoices/new", () => newInvoiceView()],
  ["/exceptions", () => exceptionsView()],
  ["/keys", () => keysView()],
  ["/settings", () => settingsView()],
  ["/webhooks", (params) => webhooksView(params)],
  ["/lifecycle", () => lifecycleView()],
  ["/chain-watchers", () => chainWatchersView()],
  ["/refunds", (params) => refundsView(params)]
])
const INVOICE_PATH = /^\/invoices\/([0-9a-f-]{36})$/

const viewOf = (path: string): View | undefined => {
  const invoice = INVOICE_PATH.exec(path)
  return invoice === null ? VIEWS.get(path) : (params) => invoiceView(invoice[1], params)
}

const route = async () => {
  const [path, query = ""] = (location.hash.slice(1) || (userId() === "" ? "/login" : "/overview")).split("?")
  const signedIn = userId() !== ""
  nav.hidden = !signedIn || path === "/login" || path === "/signup"
  for (const link of nav.querySelectorAll("a")) {
    if (link.getAttribute("href") === `#${path}`) link.setAttribute("aria-current", "page")
    else link.removeAttribute("aria-current")
  }
  const view = viewOf(path)
  if (view !== undefined) {
    try {
      await view(new URLSearchParams(query))
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
