/// <reference lib="dom" />
import type { ModalTexts } from "./ModalTexts.ts"

/** The modal's look, in the host's shadow root (a constructed sheet: a shop's CSP that forbids inline styles allows it). */
const SHEET = `
dialog { border: 0; padding: 0; width: min(480px, 100vw - 32px); height: min(760px, 100dvh - 32px); border-radius: 12px;
  box-shadow: 0 12px 48px rgb(0 0 0 / 35%); background: #fff; color: #111; overflow: hidden; }
dialog::backdrop { background: rgb(0 0 0 / 55%); }
.bar { display: flex; justify-content: flex-end; align-items: center; height: 44px; padding: 0 4px; border-bottom: 1px solid #ddd; }
.close { font: 600 15px/1 system-ui, sans-serif; color: #111; background: none; border: 0; padding: 10px 14px; border-radius: 6px; cursor: pointer; }
.close:focus-visible { outline: 3px solid #1a56db; outline-offset: 1px; }
iframe { display: block; border: 0; width: 100%; height: calc(100% - 45px); }
.fallback { font: 16px/1.5 system-ui, sans-serif; padding: 24px; }
.fallback a { color: #1a56db; }
@media (max-width: 600px) { dialog { width: 100vw; height: 100dvh; max-width: none; max-height: none; margin: 0; border-radius: 0; } }
`

let sheet: CSSStyleSheet | undefined
const styles = () => {
  sheet ??= new CSSStyleSheet()
  sheet.replaceSync(SHEET)
  return sheet
}

export interface Modal {
  readonly frame: HTMLIFrameElement
  /** Replaces the frame by a notice and a link that opens the page in a new tab. */
  readonly showLink: (href: string) => void
  readonly close: () => void
}

/**
 * A modal dialog over the shop's page holding the payment page in a frame: a native modal
 * <dialog> (the page behind is inert, so focus stays inside; Esc closes it), labelled, with a
 * visible close button; focus goes back to where it was. `onClosed` runs once, however it closed.
 */
export const openModal = (src: string, texts: ModalTexts, onClosed: () => void): Modal => {
  const returnTo = document.activeElement instanceof HTMLElement ? document.activeElement : null
  const host = document.createElement("div")
  host.setAttribute("data-checkout-invoicing", "")
  const root = host.attachShadow({ mode: "open" })
  root.adoptedStyleSheets = [styles()]
  const dialog = document.createElement("dialog")
  dialog.setAttribute("aria-label", texts.label)
  const bar = document.createElement("div")
  bar.className = "bar"
  const closeButton = document.createElement("button")
  closeButton.type = "button"
  closeButton.className = "close"
  closeButton.textContent = texts.close
  closeButton.setAttribute("aria-label", texts.closeLabel)
  bar.append(closeButton)
  const frame = document.createElement("iframe")
  frame.title = texts.frameTitle
  frame.allow = "clipboard-write"
  frame.src = src
  dialog.append(bar, frame)
  root.append(dialog)
  document.body.append(host)
  let open = true
  const close = () => {
    if (!open) return
    open = false
    if (dialog.open) dialog.close()
    host.remove()
    returnTo?.focus()
    onClosed()
  }
  closeButton.addEventListener("click", close)
  dialog.addEventListener("close", close)
  dialog.showModal()
  return {
    frame,
    close,
    showLink: (href) => {
      const message = document.createElement("p")
      message.className = "fallback"
      const link = document.createElement("a")
      link.href = href
      link.target = "_blank"
      link.rel = "noopener"
      link.textContent = texts.openInTab
      message.append(texts.cannotShow, " ", link)
      frame.replaceWith(message)
      link.focus()
    }
  }
}
