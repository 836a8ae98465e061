/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { RefundPageData } from "../PayPageView.ts"
import type { ApiError, PayRefunds, PublicRefund, Refundable, RefundRequestBody } from "./Api.ts"
import { refundMessage } from "../../refunds/RefundMessage.ts"
import { localDate } from "./Dates.ts"
import { canonicalAddress, canSign, signWithWallet } from "./Wallets.ts"

/**
 * The payer's side of refunds (issue #40) on the hosted page: what can be refunded, a form for the
 * refund address (with a hint of the network's format; the server's own check decides, and its
 * error is shown next to the field) and an optional email, and the refunds asked for with their
 * status. The section is drawn hidden by the server (PayPageView) when the invoice may have
 * something to refund; this script asks the refund endpoint and shows what it answers. While a
 * refund is on its way (requested or sent) it asks again, less and less often, paused while the tab
 * is hidden, until every refund is completed or rejected. `onShown` is called when there is
 * something to show (the page then stays: no automatic return to the shop). Where a wallet that
 * can sign is in the browser (EIP-1193, Solana wallet-standard), "Sign with your wallet" signs the
 * refund message (RefundMessage.ts) so that the request is marked verified when that wallet paid
 * (issue #52); the plain button sends it unsigned. Requests of an option stand side by side while
 * pending, so the offer stays open to another visitor; this browser remembers its own requests.
 */

type Texts = RefundPageData["texts"]
type Family = keyof Texts["addressHint"]

const FAMILY: Readonly<Record<string, Family>> = { ethereum: "evm", arbitrum: "evm", base: "evm", solana: "solana", bitcoin: "bitcoin" }

/** The shape of an address on each network: a hint only (checksums are the server's to check). */
const FORMAT: Readonly<Record<Family, RegExp>> = {
  evm: /^0x[0-9a-fA-F]{40}$/,
  solana: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/,
  bitcoin: /^(?:bc1[02-9ac-hj-np-z]{11,87}|BC1[02-9AC-HJ-NP-Z]{11,87}|[13][1-9A-HJ-NP-Za-km-z]{25,34})$/
}

const FIRST_DELAY_MS = 8_000
const LONGEST_DELAY_MS = 60_000

const fill = (template: string, values: Readonly<Record<string, string>>) => template.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole)

const el = (tag: string, attributes: Readonly<Record<string, string>> = {}, ...children: Array<Node | string>) => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value)
  element.append(...children)
  return element
}

/** The parts of the section (drawn by the server) that the script fills in and reads. */
const partsOf = (section: HTMLElement) => {
  const part = <E extends Element>(selector: string) => section.querySelector<E>(selector)!
  return {
    list: part<HTMLUListElement>("ul.refunds"),
    offer: part<HTMLElement>(".refund-offer"),
    reason: part<HTMLElement>(".refund-reason"),
    opener: part<HTMLButtonElement>("button.refund-open"),
    form: part<HTMLFormElement>("form.refund-form"),
    choices: part<HTMLFieldSetElement>("fieldset.refund-options"),
    single: part<HTMLElement>(".refund-single"),
    address: part<HTMLInputElement>("#refund-address"),
    addressLabel: part<HTMLLabelElement>(".refund-address-label"),
    addressHint: part<HTMLElement>("#refund-address-hint"),
    addressError: part<HTMLElement>("#refund-address-error"),
    email: part<HTMLInputElement>("#refund-email"),
    emailError: part<HTMLElement>("#refund-email-error"),
    formError: part<HTMLElement>(".refund-error"),
    submit: part<HTMLButtonElement>("button.refund-submit"),
    sign: part<HTMLButtonElement>("button.refund-sign"),
    signRow: part<HTMLElement>(".refund-sign-row")
  }
}
type Parts = ReturnType<typeof partsOf>

/** How refunds and amounts read on the page, in its language. */
const wording = (data: RefundPageData) => {
  const { texts: t, networks, explorers } = data
  const networkName = (network: string) => (networks as Readonly<Record<string, string>>)[network] ?? network
  const amountText = (item: Pick<Refundable, "amount" | "assetCode" | "network">) =>
    fill(t.amountOn, { amount: item.amount, asset: item.assetCode, network: networkName(item.network) })
  const transaction = (refund: PublicRefund, hash: string) => {
    const template = (explorers as Readonly<Record<string, string>>)[refund.network]
    const code = el("code", { class: "tx-hash" }, hash.length > 20 ? `${hash.slice(0, 10)}…${hash.slice(-8)}` : hash)
    return template === undefined
      ? code
      : el("a", { class: "tx-link", href: template.replace("{tx}", encodeURIComponent(hash)), target: "_blank", rel: "noopener noreferrer", title: hash }, code)
  }
  const refundItem = (refund: PublicRefund) => {
    const item = el("li", { class: `refund-item refund-${refund.status}`, "data-refund-id": refund.id, "data-status": refund.status },
      el("p", { class: "refund-amount" }, el("strong", {}, amountText(refund)), ` ${t.to} `, el("code", { class: "refund-address" }, refund.refundAddress)),
      el("p", { class: "refund-state", tabindex: "-1" }, t.status[refund.status]))
    if (refund.rejectionNote !== null) item.append(el("p", { class: "refund-note" }, `${t.note}: `, el("q", {}, refund.rejectionNote)))
    if (refund.transactionHash !== null) item.append(el("p", { class: "refund-tx" }, `${t.transaction}: `, transaction(refund, refund.transactionHash)))
    if (refund.verified) item.append(el("p", { class: "refund-verified" }, t.verified))
    item.append(el("p", { class: "hint" }, `${t.requestedAt} `, el("time", { datetime: refund.requestedAt }, localDate(refund.requestedAt))))
    return item
  }
  return { t, networkName, amountText, refundItem }
}
type Wording = ReturnType<typeof wording>

/** The offer: the options still open to a request, as a choice when several, and the address field following the chosen one's network. */
const offerDrawer = (parts: Parts, words: Wording, mine: Mine) => {
  const { offer, reason, choices, single, addressLabel, addressHint, signRow } = parts
  const { t, networkName, amountText } = words
  let offered: ReadonlyArray<Refundable> = []
  const chosen = () => {
    const checked = choices.querySelector<HTMLInputElement>("input:checked")?.value
    return offered.find((item) => item.paymentOptionId === checked) ?? offered[0]
  }
  const describeAddress = () => {
    const option = chosen()
    if (option === undefined) return
    addressLabel.textContent = fill(t.address, { network: networkName(option.network) })
    addressHint.textContent = t.addressHint[FAMILY[option.network] ?? "evm"]
    signRow.hidden = true
    void canSign(option.network).then((can) => (signRow.hidden = !can || chosen() !== option))
  }
  // A wallet may register after the offer was drawn: look again when the form opens.
  parts.opener.addEventListener("click", describeAddress)
  /** Open to a request: refundable (the server's word) and not asked for from this browser. */
  const draw = (current: PayRefunds) => {
    const askedHere = (optionId: string) => current.refunds.some((refund) => refund.paymentOptionId === optionId && mine.has(refund.id))
    const open = current.refundable.filter((item) => item.amountAtomic !== "0" && !askedHere(item.paymentOptionId))
    // Unchanged: the form keeps what the payer has typed and chosen.
    if (open.map((item) => item.paymentOptionId).join() === offered.map((item) => item.paymentOptionId).join()) return
    offered = open
    offer.hidden = open.length === 0
    if (open.length === 0) return
    reason.textContent = open[0].reason === "overpayment" ? t.overpayment : t.closeUnpaid
    choices.replaceChildren(choices.querySelector("legend")!)
    choices.hidden = open.length < 2
    single.hidden = open.length > 1
    single.textContent = amountText(open[0])
    open.forEach((item, index) => {
      const input = el("input", { type: "radio", name: "paymentOptionId", value: item.paymentOptionId, id: `refund-option-${index}` }) as HTMLInputElement
      input.checked = index === 0
      input.addEventListener("change", describeAddress)
      choices.append(el("div", { class: "refund-choice" }, input, el("label", { for: input.id }, amountText(item))))
    })
    describeAddress()
  }
  return { draw, chosen, offered: () => offered }
}

/** The refund endpoint asked again, less and less often, while a refund is on its way; paused while the tab is hidden. */
const refreshing = (url: string, onChange: (next: PayRefunds) => void, onTheWay: () => boolean) => {
  let delay = FIRST_DELAY_MS
  let timer: ReturnType<typeof setTimeout> | undefined
  let last = ""
  const schedule = () => {
    clearTimeout(timer)
    if (!document.hidden && onTheWay()) timer = setTimeout(() => void refresh(), delay)
  }
  const refresh = async () => {
    try {
      const response = await fetch(url, { headers: { accept: "application/json" } })
      if (response.ok) {
        const text = await response.text()
        if (text !== last) {
          last = text
          onChange(JSON.parse(text) as PayRefunds)
        }
      }
    } catch {
      // Offline for a moment: the next round asks again.
    }
    delay = Math.min(delay * 1.5, LONGEST_DELAY_MS)
    schedule()
  }
  const soon = () => {
    delay = FIRST_DELAY_MS
    schedule()
  }
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) delay = FIRST_DELAY_MS
    schedule()
  })
  return { refresh, soon }
}

/** The refunds requested from this browser (kept in localStorage; without it, for this page's life). */
const remembered = (invoiceId: string) => {
  const key = `checkout.refunds.${invoiceId}`
  const ids = new Set<string>()
  try {
    for (const id of JSON.parse(localStorage.getItem(key) ?? "[]") as Array<string>) ids.add(id)
  } catch {
    // Storage refused or unreadable: remembered for this page only.
  }
  return {
    has: (id: string) => ids.has(id),
    add: (id: string) => {
      ids.add(id)
      try {
        localStorage.setItem(key, JSON.stringify([...ids]))
      } catch {
        // As above.
      }
    }
  }
}
type Mine = ReturnType<typeof remembered>

export const showRefunds = (invoiceId: string, onShown: () => void) => {
  const section = document.querySelector<HTMLElement>("section.refund")
  if (section === null) return
  const parts = partsOf(section)
  const words = wording(JSON.parse(section.dataset.refund ?? "{}") as RefundPageData)
  const mine = remembered(invoiceId)
  const offer = offerDrawer(parts, words, mine)
  const url = `/api/checkout/pay/${encodeURIComponent(invoiceId)}/refunds`
  let current: PayRefunds = { refundable: [], refunds: [], signatureDomain: location.host }
  const messageFor = (option: Refundable, refundAddress: string) =>
    refundMessage({ domain: current.signatureDomain, invoiceId, paymentOptionId: option.paymentOptionId, refundAddress: canonicalAddress(option.network, refundAddress) })
  const draw = () => {
    parts.list.replaceChildren(...current.refunds.map(words.refundItem))
    offer.draw(current)
    const shown = current.refunds.length > 0 || offer.offered().length > 0
    if (shown && section.hidden) {
      section.hidden = false
      onShown()
    }
  }
  const onTheWay = () => current.refunds.some((refund) => refund.status === "requested" || refund.status === "sent")
  const poller = refreshing(url, (next) => {
    current = next
    draw()
  }, onTheWay)
  openOnRequest(parts)
  handleSubmit(parts, words, url, offer.chosen, messageFor, async (refund) => {
    mine.add(refund.id)
    current = { ...current, refunds: [...current.refunds.filter((other) => other.id !== refund.id), refund] }
    draw()
    poller.soon()
  }, poller.refresh)
  void poller.refresh().then(poller.soon)
}

/** One button offers the refund; it gives way to the form it opens. */
const openOnRequest = ({ opener, form, choices, address }: Parts) => {
  opener.addEventListener("click", () => {
    form.hidden = false
    opener.hidden = true
    opener.setAttribute("aria-expanded", "true")
    ;(choices.hidden ? address : choices.querySelector<HTMLInputElement>("input:checked") ?? address).focus()
  })
}

/** Sends the request: the address's shape checked first, the server's answer shown next to its field. */
const handleSubmit = (
  parts: Parts,
  words: Wording,
  url: string,
  chosen: () => Refundable | undefined,
  messageFor: (option: Refundable, refundAddress: string) => string,
  requested: (refund: PublicRefund) => Promise<void>,
  refresh: () => Promise<void>
) => {
  const { form, address, email, addressError, emailError, formError, submit, sign, opener, list } = parts
  const { t, networkName } = words
  const fieldError = (field: HTMLInputElement, target: HTMLElement, message: string) => {
    target.textContent = message
    field.setAttribute("aria-invalid", "true")
    field.focus()
  }
  const send = async (body: RefundRequestBody) => {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(body) })
    if (!response.ok) {
      const message = ((await response.json().catch(() => undefined)) as ApiError | undefined)?.error ?? `HTTP ${response.status}`
      if (message.startsWith("refundAddress ")) fieldError(address, addressError, message)
      else if (message.startsWith("email ")) fieldError(email, emailError, message)
      else formError.textContent = `${t.failed}: ${message}`
      // Already asked (from another tab, say): show what the server holds.
      if (response.status === 409) await refresh()
      return
    }
    const refund = (await response.json()) as PublicRefund
    form.reset()
    form.hidden = true
    opener.hidden = false
    opener.setAttribute("aria-expanded", "false")
    await requested(refund)
    list.querySelector<HTMLElement>(`[data-refund-id="${refund.id}"] .refund-state`)?.focus()
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    for (const target of [addressError, emailError, formError]) target.textContent = ""
    for (const field of [address, email]) field.removeAttribute("aria-invalid")
    const option = chosen()
    if (option === undefined) return
    const refundAddress = address.value.trim()
    if (!FORMAT[FAMILY[option.network] ?? "evm"].test(refundAddress)) {
      return fieldError(address, addressError, fill(t.addressFormat, { network: networkName(option.network) }))
    }
    const button = (event as SubmitEvent).submitter === sign ? sign : submit
    button.disabled = true
    button.setAttribute("aria-busy", "true")
    try {
      const signed = button === sign ? await signWithWallet(option.network, messageFor(option, refundAddress)) : {}
      await send({ paymentOptionId: option.paymentOptionId, refundAddress, ...(email.value.trim() === "" ? {} : { email: email.value.trim() }), ...signed })
    } catch (error) {
      formError.textContent = `${t.failed}: ${error instanceof Error ? error.message : String(error)}`
    } finally {
      button.disabled = false
      button.removeAttribute("aria-busy")
    }
  })
}
