/// <reference lib="dom" />
import { isHello, MESSAGE_SOURCE, type PageMessage } from "../embed/Messages.ts"

/** Whether the page is shown in a frame (a shop's checkout.js modal). */
export const isFramed = () => window.parent !== window

/**
 * The page's side of the embedded checkout: once the parent says hello it answers `ready`, then
 * posts each status the page shows to that origin exactly. The hello must come from the parent
 * window itself; the parent's origin was allowed by frame-ancestors before this page could run,
 * so the origin the browser names for it is one of the merchant's embed origins.
 */
export const embeddedBridge = (invoiceId: string, currentStatus: () => string | undefined) => {
  let parentOrigin: string | undefined
  let sent: string | undefined
  const post = (type: PageMessage["type"]) => {
    const status = currentStatus()
    if (parentOrigin === undefined || status === undefined) return
    sent = status
    const message: PageMessage = { source: MESSAGE_SOURCE, type, invoiceId, status }
    window.parent.postMessage(message, parentOrigin)
  }
  if (isFramed()) {
    window.addEventListener("message", (event) => {
      if (event.source !== window.parent || !isHello(event.data) || event.origin === "null") return
      parentOrigin = event.origin
      post("ready")
    })
  }
  return {
    /** After each redraw: posts the status when it changed. */
    report: () => {
      if (currentStatus() !== sent) post("status")
    }
  }
}

/** In a frame, a link to the same page in a new tab, for wallet extensions that do not reach into frames. */
export const offerNewTab = (main: HTMLElement) => {
  if (!isFramed() || main.dataset.openInTab === undefined) return
  const link = document.createElement("a")
  link.href = location.href
  link.target = "_blank"
  link.rel = "noopener"
  link.textContent = main.dataset.openInTab
  const note = document.createElement("p")
  note.className = "open-in-tab"
  note.append(link)
  main.after(note)
}
