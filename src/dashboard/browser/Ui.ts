/**
 * The dashboard's building blocks, shared by its views (main.ts, Refunds.ts): requests to the
 * service (session cookie, CSRF token echoed on writes, the `{error}` answer as an ApiError, a late
 * answer for a page left as Superseded), elements, tables that become cards on a phone, and forms
 * whose errors appear next to the field they name.
 */

import { stateWords } from "../Words.ts"

export const app = document.getElementById("app")!

export const csrfToken = () => /(?:^|;\s*)checkout_csrf=([^;]+)/.exec(document.cookie)?.[1] ?? ""
export const userId = () => localStorage.getItem("checkout.userId") ?? ""

export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/**
 * An answer that arrived after the merchant went to another page: the view that asked for it must
 * not draw over the page now shown (a slow answer for the page left would replace the new one).
 */
export class Superseded extends Error {}
// A view refreshed without waiting (after an action) may be superseded too: that is no error.
addEventListener("unhandledrejection", (event) => {
  if (event.reason instanceof Superseded) event.preventDefault()
})

/** The service's `{error}` answer. */
export interface ErrorBody {
  readonly error?: string
}

/** A request to the service; `A` is the endpoint's answer as its schema encodes it (./Api.ts). */
export const api = async <A = void>(method: string, path: string, body?: unknown, extraHeaders: Readonly<Record<string, string>> = {}): Promise<A> => {
  const headers: Record<string, string> = { ...extraHeaders }
  if (body !== undefined) headers["content-type"] = "application/json"
  if (method !== "GET") headers["x-csrf-token"] = decodeURIComponent(csrfToken())
  const askedFrom = location.hash
  const response = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  if (location.hash !== askedFrom) throw new Superseded(`${method} ${path} answered after leaving ${askedFrom}`)
  const parsed: unknown = text === "" ? null : JSON.parse(text)
  const error = (parsed as ErrorBody | null)?.error
  if (response.status === 401) {
    location.hash = "#/login"
    throw new ApiError(401, error ?? "Please log in")
  }
  if (!response.ok) throw new ApiError(response.status, error ?? `HTTP ${response.status}`)
  return parsed as A
}

const SVG = "http://www.w3.org/2000/svg"
/** `h` for SVG elements (the charts): attributes only, no listeners. */
export const svg = (tag: string, attributes: Record<string, string | number> = {}, ...children: Array<Node | string>) => {
  const element = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value))
  element.append(...children)
  return element
}

export type Child = Node | string | null | undefined | false
export const h = (tag: string, attributes: Record<string, string | boolean | ((event: Event) => void)> = {}, ...children: Array<Child | Array<Child>>) => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === "function") element.addEventListener(name.slice(2), value)
    else if (value === true) element.setAttribute(name, "")
    else if (value !== false) element.setAttribute(name, value)
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    element.append(typeof child === "string" ? document.createTextNode(child) : child)
  }
  return element
}

export const show = (...children: Array<Child>) => {
  app.replaceChildren(...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false))
  const heading = app.querySelector("h1")
  if (heading !== null) {
    heading.setAttribute("tabindex", "-1")
    heading.focus()
  }
}
export const notice = (text: string, kind: "error" | "ok" = "error") => h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text)
/** A time as "2026-11-29 07:16:05 UTC": every time the dashboard shows is in UTC, named so (docs/dashboard.md). */
export const when = (iso: string | null) => (iso === null ? "—" : `${new Date(iso).toISOString().slice(0, 19).replace("T", " ")} UTC`)
export const usd = (amount: number) => `$${amount.toFixed(2)}`
/** A status in words, in its colour: "Awaiting payment". */
export const statusBadge = (status: string) => h("span", { class: `status ${status}`, "data-status": status }, stateWords(status))

/** A table that becomes a list of cards under 600 px: each cell carries its column's name, shown before it there. A column named "" (buttons) is "Actions" to screen readers. */
export const cardTable = (columns: ReadonlyArray<string>, rows: ReadonlyArray<HTMLElement>) => {
  for (const row of rows) [...row.children].forEach((cell, index) => columns[index] !== "" && cell.setAttribute("data-label", columns[index]))
  return h("div", { class: "scroll" },
    h("table", { class: "cards" },
      h("thead", {}, h("tr", {}, ...columns.map((name) => h("th", { scope: "col" }, name === "" ? h("span", { class: "visually-hidden" }, "Actions") : name)))),
      h("tbody", {}, ...rows)))
}

/** Runs a form's action; the server's `{error}` appears next to the field it names, else above the form. */
export const submitting = (form: HTMLFormElement, action: () => Promise<void>) => async (event: Event) => {
  event.preventDefault()
  for (const old of form.querySelectorAll(".field-error, .notice")) old.remove()
  for (const invalid of form.querySelectorAll("[aria-invalid]")) invalid.removeAttribute("aria-invalid")
  try {
    await action()
  } catch (error) {
    const message = (error as Error).message
    const field = [...form.querySelectorAll<HTMLElement>("[data-field]")]
      .sort((a, b) => (b.dataset.field!.length - a.dataset.field!.length))
      .find((candidate) => message.startsWith(`${candidate.dataset.field} `))
    if (field !== undefined) {
      field.setAttribute("aria-invalid", "true")
      const id = `error-${Math.random().toString(36).slice(2)}`
      field.setAttribute("aria-describedby", id)
      field.after(h("p", { class: "field-error", id, role: "alert" }, message))
      field.focus()
    } else form.prepend(notice(message))
  }
}

export const copyButton = (text: string) =>
  h("button", { type: "button", class: "copy", onclick: async (event: Event) => {
    await navigator.clipboard.writeText(text).catch(() => undefined)
    ;(event.target as HTMLElement).textContent = "Copied"
  } }, "Copy")

/** A select of `values`, each shown as `words` has it (the value itself by default). */
export const select = (name: string, label: string, values: ReadonlyArray<string>, selected = "", blank = "any", words: (value: string) => string = (value) => value) =>
  h("label", {}, label, h("select", { name, "data-field": name }, blank === "" ? null : h("option", { value: "" }, blank), ...values.map((value) =>
    h("option", { value, selected: value === selected }, words(value))
  )))
