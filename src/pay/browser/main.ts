/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { base58, base64 } from "@scure/base"
import { encodeFunctionData, erc20Abi } from "viem"
import { localizeDates } from "./Dates.ts"
import { followPage } from "./LivePage.ts"
import { showRefunds } from "./Refunds.ts"
import { embeddedBridge, isFramed, offerNewTab } from "./Embedded.ts"
import type { ApiError, PreparedSolanaPayment, PrepareSolanaBody } from "./Api.ts"
import { simulatePayment } from "./TestMode.ts"
import { evmProvider, wallets } from "./Wallets.ts"

/** The hosted payment page's enhancements; the page is complete without them. */
const main = document.querySelector<HTMLElement>("main.card")
const data = main?.dataset ?? {}
const invoiceId = data.invoiceId

// ---- option switching without a reload (the tabs are links that work without JavaScript); copy buttons
document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target : null
  const tab = target?.closest<HTMLAnchorElement>(".option-tab")
  if (tab != null) {
    event.preventDefault()
    selectOption(tab)
  }
  const copy = target?.closest<HTMLButtonElement>("button.copy")
  if (copy != null) void copyValue(copy)
  const pay = target?.closest<HTMLButtonElement>("button[data-pay]")
  if (pay != null) void payWith(pay)
  const simulate = target?.closest<HTMLButtonElement>("button[data-simulate]")
  if (simulate != null && invoiceId !== undefined && !simulate.disabled) void simulatePayment(invoiceId, simulate)
})

const selectOption = (tab: HTMLAnchorElement) => {
  const id = tab.dataset.optionId!
  // The tabs choose among the options of their group (after a partial payment, the folded ones).
  const group = tab.closest(".option-group") ?? document
  for (const other of group.querySelectorAll<HTMLAnchorElement>(".option-tab")) {
    if (other.dataset.optionId === id) other.setAttribute("aria-current", "true")
    else other.removeAttribute("aria-current")
  }
  for (const section of group.querySelectorAll<HTMLElement>("section.option")) section.hidden = section.dataset.optionId !== id
  // Other parameters (a language chosen with `?lang=`) stay.
  const search = new URLSearchParams(location.search)
  search.set("option", id)
  history.replaceState(null, "", `?${search}`)
}

const copyValue = async (button: HTMLButtonElement) => {
  try {
    await navigator.clipboard.writeText(button.dataset.copy ?? "")
    const label = button.textContent
    button.textContent = button.dataset.copied ?? "Copied"
    setTimeout(() => (button.textContent = label), 1500)
  } catch {
    // Clipboard refused (permissions): the value stays selectable on the page.
  }
}

// ---- countdown of immediate invoices (looked up at each tick: a redraw may bring or take it)
const tick = () => {
  const countdown = document.querySelector<HTMLTimeElement>("time.countdown")
  if (countdown === null) return
  const left = Math.max(0, Date.parse(countdown.dateTime) - Date.now())
  const minutes = Math.floor(left / 60_000)
  const seconds = Math.floor((left % 60_000) / 1000)
  countdown.textContent = `${minutes}:${String(seconds).padStart(2, "0")}`
}
tick()
setInterval(tick, 1000)
localizeDates()

// ---- past the deadline nothing is payable: the options go, even before the sweeper has run
if (data.payableUntil !== undefined && data.renderedAt !== undefined) {
  // By the server's clock: a payer's clock that runs ahead or behind does not move the deadline.
  const skew = Date.parse(data.renderedAt) - Date.now()
  const closeAt = Date.parse(data.payableUntil) - skew
  const close = () => {
    if (Date.now() < closeAt) return void setTimeout(close, Math.min(closeAt - Date.now(), 60_000))
    if (data.payableUntil === undefined) return
    for (const element of document.querySelectorAll<HTMLElement>(".pay-options, nav.options, section.option, .single-option")) element.hidden = true
    const notice = document.createElement("p")
    notice.className = "warning"
    notice.setAttribute("role", "status")
    notice.textContent = data.expiredText ?? ""
    document.querySelector(".payment")?.prepend(notice)
  }
  close()
}

// ---- back to the shop after a confirmed payment (not when a refund is offered or on its way: the payer stays to read it)
let returning: ReturnType<typeof setTimeout> | undefined
let refundsShown = false
const returnLater = () => {
  // In a shop's modal the shop hears `confirmed` and decides; the frame never navigates to the shop.
  if (data.redirectUrl === undefined || returning !== undefined || refundsShown || isFramed()) return
  returning = setTimeout(() => location.assign(data.redirectUrl!), 5_000)
}
// ---- refunds (issue #40): shown when the invoice has something to refund or refunds asked for
let refundsFollowed = false
const followRefunds = () => {
  if (invoiceId === undefined || refundsFollowed || document.querySelector("section.refund") === null) return
  refundsFollowed = true
  showRefunds(invoiceId, () => {
    refundsShown = true
    clearTimeout(returning)
  })
}
followRefunds()
returnLater()

// ---- in a shop's modal (checkout.js): statuses to the shop, a way out for wallets that do not reach frames
const embedded = main === null || invoiceId === undefined ? undefined : embeddedBridge(invoiceId, () => main.dataset.status)
if (main !== null) offerNewTab(main)

// ---- live status: the page follows its invoice in place (no navigation while it is open)
if (main !== null && invoiceId !== undefined) {
  followPage(main, invoiceId, () => {
    embedded?.report()
    localizeDates()
    followRefunds()
    returnLater()
    tick()
  })
}

// ---- pay with a browser wallet
const statusOf = (button: HTMLElement) => button.closest("section.option")?.querySelector<HTMLElement>(".wallet-status") ?? undefined
const say = (button: HTMLElement, text: string) => {
  const target = statusOf(button)
  if (target !== undefined) target.textContent = text
}

const payEvm = async (button: HTMLButtonElement) => {
  const provider = await evmProvider()
  if (provider === undefined) return say(button, data.walletNone ?? "")
  say(button, data.walletSending ?? "")
  const [from] = (await provider.request({ method: "eth_requestAccounts" })) as Array<string>
  await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: `0x${Number(button.dataset.chainId).toString(16)}` }] })
  const input = encodeFunctionData({
    abi: erc20Abi,
    functionName: "transfer",
    args: [button.dataset.to as `0x${string}`, BigInt(button.dataset.amount!)]
  })
  const hash = await provider.request({ method: "eth_sendTransaction", params: [{ from, to: button.dataset.token, data: input }] })
  say(button, `${data.walletSent ?? ""} ${String(hash)}`)
}

const paySolana = async (button: HTMLButtonElement) => {
  const wallet = wallets.get().find((candidate) => "solana:signAndSendTransaction" in candidate.features && "standard:connect" in candidate.features)
  if (wallet === undefined) return say(button, data.walletNone ?? "")
  say(button, data.walletSending ?? "")
  const connect = wallet.features["standard:connect"] as { connect: () => Promise<{ accounts: ReadonlyArray<{ publicKey: Uint8Array }> }> }
  const { accounts } = await connect.connect()
  const account = accounts[0]
  const body: PrepareSolanaBody = { paymentOptionId: button.dataset.optionId ?? "", payerPublicKey: base58.encode(account.publicKey) }
  const response = await fetch(`/api/checkout/pay/${invoiceId}/prepare-solana-wallet-payment`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (!response.ok) {
    const failure = (await response.json().catch(() => undefined)) as ApiError | undefined
    throw new Error(failure?.error ?? `HTTP ${response.status}`)
  }
  const prepared = (await response.json()) as PreparedSolanaPayment
  const send = wallet.features["solana:signAndSendTransaction"] as {
    signAndSendTransaction: (input: { account: unknown; transaction: Uint8Array; chain: string }) => Promise<ReadonlyArray<{ signature: Uint8Array }>>
  }
  const [sent] = await send.signAndSendTransaction({ account, transaction: base64.decode(prepared.transaction), chain: "solana:mainnet" })
  say(button, `${data.walletSent ?? ""} ${base58.encode(sent.signature)}`)
}

async function payWith(button: HTMLButtonElement) {
  if (button.disabled) return
  button.disabled = true
  try {
    await (button.dataset.pay === "solana" ? paySolana(button) : payEvm(button))
  } catch (error) {
    say(button, `${data.walletFailed ?? ""}: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    button.disabled = false
  }
}
