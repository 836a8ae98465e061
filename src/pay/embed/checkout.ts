/// <reference lib="dom" />
import { isPageMessage, MESSAGE_SOURCE } from "./Messages.ts"
import { type Modal, openModal } from "./Modal.ts"
import { modalLanguage, modalTexts } from "./ModalTexts.ts"

/**
 * checkout.js (issue #57): the shop's side of the embedded checkout. `CheckoutInvoicing.open`
 * shows the payment page in a modal over the shop's page and reports the statuses the page posts;
 * `<checkout-invoicing-button payment-url="…">` opens it on click. Browser events are for the
 * payer's experience only: the shop fulfils on its verified webhook.
 */
export interface CheckoutStatus {
  readonly invoiceId: string
  readonly status: string
}

export interface OpenOptions {
  readonly onStatus?: (event: CheckoutStatus) => void
}

/** How long after the frame has loaded the page has to answer before the checkout opens it in a tab instead. */
const READY_TIMEOUT_MS = 3_000

const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null
/** The service's origin: where this script came from (and the only origin whose messages count). */
const serviceOrigin = new URL(script?.src ?? location.href).origin

const invoiceIdOf = (url: URL) => url.pathname.split("/").pop() ?? ""

const refuseFraming = (modal: Modal, url: URL) => {
  console.warn(
    `CheckoutInvoicing: the payment page did not load in a frame on ${location.origin}. Add this origin to the checkout settings' embedOrigins ` +
      `to keep payers on this page; opening it in a new tab instead.`
  )
  const tab = window.open(url.href, "_blank")
  if (tab !== null) {
    tab.opener = null
    modal.close()
  } else {
    modal.showLink(url.href)
  }
}

/** Opens the payment page at `paymentUrl` (a page of this service) in a modal; `close()` closes it. */
const open = (paymentUrl: string, options: OpenOptions = {}): { close: () => void } => {
  const url = new URL(paymentUrl, location.href)
  if (url.origin !== serviceOrigin || !url.pathname.startsWith("/pay/")) {
    throw new Error(`CheckoutInvoicing.open: ${paymentUrl} is not a payment page of ${serviceOrigin}`)
  }
  const invoiceId = invoiceIdOf(url)
  // The modal and the page in it speak the shop page's language (unless the link names one).
  const language = modalLanguage()
  if (!url.searchParams.has("lang")) url.searchParams.set("lang", language)
  let last: string | undefined
  let ready = false
  let fellBack = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const report = (status: string) => {
    if (status === last) return
    last = status
    options.onStatus?.({ invoiceId, status })
  }
  const onMessage = (event: MessageEvent) => {
    if (event.origin !== serviceOrigin || event.source !== modal.frame.contentWindow || !isPageMessage(event.data)) return
    if (event.data.invoiceId !== invoiceId) return
    ready = true
    clearTimeout(timer)
    report(event.data.status)
  }
  const modal = openModal(url.href, modalTexts(language), () => {
    clearTimeout(timer)
    window.removeEventListener("message", onMessage)
    if (!fellBack) report("closed")
  })
  window.addEventListener("message", onMessage)
  modal.frame.addEventListener("load", () => {
    modal.frame.contentWindow?.postMessage({ source: MESSAGE_SOURCE, type: "hello" }, serviceOrigin)
    // A page refused by frame-ancestors loads as an error page that never answers.
    if (!ready) {
      clearTimeout(timer)
      timer = setTimeout(() => {
        if (ready) return
        fellBack = true
        refuseFraming(modal, url)
      }, READY_TIMEOUT_MS)
    }
  })
  return { close: modal.close }
}

/** `<checkout-invoicing-button payment-url="…">Pay with crypto</checkout-invoicing-button>`: a button that opens the modal. */
class CheckoutInvoicingButton extends HTMLElement {
  constructor() {
    super()
    const root = this.attachShadow({ mode: "open" })
    const button = document.createElement("button")
    button.type = "button"
    button.setAttribute("part", "button")
    button.append(document.createElement("slot"))
    root.append(button)
    button.addEventListener("click", () => {
      const paymentUrl = this.getAttribute("payment-url")
      if (paymentUrl === null) return console.warn("checkout-invoicing-button: no payment-url attribute")
      open(paymentUrl, {
        onStatus: (detail) => this.dispatchEvent(new CustomEvent("checkout-status", { bubbles: true, composed: true, detail }))
      })
    })
  }
}

if (customElements.get("checkout-invoicing-button") === undefined) customElements.define("checkout-invoicing-button", CheckoutInvoicingButton)
;(window as unknown as { CheckoutInvoicing: unknown }).CheckoutInvoicing = { open }
