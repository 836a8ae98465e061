import { remainingAtomic } from "../domain/Evidence.ts"
import type { InvoiceParts, PaymentOptionRecord } from "../domain/Invoice.ts"
import { formatAtomic } from "../domain/Money.ts"
import { eip681Uri } from "../payments/PaymentUris.ts"
import { qrSvg } from "../payments/QrCode.ts"
import { assetIcon, networkIcon } from "./Icons.ts"
import { type Html, html, joined, raw } from "./Html.ts"
import { assetOnNetwork, copyButton, counted, networkName } from "./PayPageText.ts"
import { fill, type Strings } from "./Strings.ts"

// The payer page's payment options: tabs, the amount to send, wallet buttons, QR code, address.

/**
 * A payment URI asking for `atomic` instead of the quoted amount (BIP21 and Solana Pay: decimal
 * `amount`; EIP-681: `uint256`). A wallet-contract option has no URI in the API (the spec gives
 * URIs to address-transfer options only), but its forwarder takes a plain token transfer: the page
 * asks for one with an EIP-681 transfer URI, so that a phone can pay it like any other option.
 */
export const uriForAmount = (option: PaymentOptionRecord, atomic: bigint): string | null => {
  if (option.railType === "wallet_contract") {
    const payload = option.optionPayload ?? {}
    const { chainId, contractAddress } = payload
    if (typeof chainId !== "number" || typeof contractAddress !== "string" || option.tokenContract === null) return null
    return eip681Uri(option.tokenContract, chainId, contractAddress, atomic)
  }
  if (option.paymentUri === null) return null
  if (option.paymentUri.startsWith("ethereum:")) return option.paymentUri.replace(/([?&]uint256=)\d+/, `$1${atomic}`)
  return option.paymentUri.replace(/([?&]amount=)[0-9.]+/, `$1${formatAtomic(atomic, option.decimals)}`)
}

/** Where the payer sends an option's payment: its forwarder contract or its address. */
const destinationOf = (option: PaymentOptionRecord): string => {
  const contract = option.optionPayload?.contractAddress
  return option.railType === "wallet_contract" ? (typeof contract === "string" ? contract : "") : option.destinationAddress ?? ""
}

/** An address in groups of four characters (after `0x`), for reading aloud and comparing; selecting it copies the plain address. */
export const addressGroups = (address: string): ReadonlyArray<string> => {
  const prefix = address.startsWith("0x") ? "0x" : ""
  const rest = address.slice(prefix.length)
  const groups = rest.match(/.{1,4}/g) ?? []
  return prefix === "" ? groups : [prefix, ...groups]
}

/** The buttons that pay an option from this device: its wallet link and a browser wallet. */
const walletActions = (option: PaymentOptionRecord, t: Strings, uri: string | null, destination: string, atomic: bigint) => {
  const payload = option.optionPayload ?? {}
  const actions: Array<Html> = []
  if (uri !== null) actions.push(html`<a class="button primary open-wallet" href="${uri}">${t.openInWallet}</a>`)
  if (option.network === "solana") {
    actions.push(html`<button type="button" class="button" data-pay="solana" data-option-id="${option.id}">${t.payWithWallet}</button>`)
  } else if (option.tokenContract !== null && typeof payload.chainId === "number" && destination !== "") {
    actions.push(
      html`<button type="button" class="button" data-pay="evm" data-chain-id="${payload.chainId}" data-token="${option.tokenContract}" data-to="${destination}" data-amount="${atomic}">${t.payWithWallet}</button>`
    )
  }
  return actions
}

/** What was received in this option so far and what is still to send there. */
const optionProgress = (parts: InvoiceParts, option: PaymentOptionRecord, t: Strings, amountText: string) => {
  const own = counted(parts).filter((payment) => payment.paymentOptionId === option.id)
  if (own.length === 0) return []
  const received = own.reduce((sum, payment) => sum + payment.amountAtomic, 0n)
  return [
    html`<p class="option-progress">${t.receivedHere}: <strong class="option-received">${
      formatAtomic(received, option.decimals)
    } ${option.assetCode}</strong> · ${t.remainingHere}: <strong class="option-remaining">${amountText} ${option.assetCode}</strong></p>`
  ]
}

/**
 * One option: the amount to send, then the ways to pay it from this device (on a phone the wallet
 * button comes before the QR code, within the first screen; on a desktop the code sits beside the
 * buttons), then the address to copy and the warning about the network.
 */
const optionSection = (parts: InvoiceParts, option: PaymentOptionRecord, t: Strings, selected: boolean) => {
  const atomic = remainingAtomic(parts.invoice.amountMicros, option, parts.payments ?? [])
  const amountText = formatAtomic(atomic, option.decimals)
  const uri = uriForAmount(option, atomic)
  const destination = destinationOf(option)
  const lines = [
    html`<section class="option" id="option-${option.id}" data-option-id="${option.id}"${selected ? "" : " hidden"}>`,
    html`<p class="send">${t.sendExactly} <strong class="asset-amount">${amountText} ${option.assetCode}</strong> ${t.on} ${networkName(t, option.network)} ${
      copyButton(t, t.copyAmount, amountText)
    }</p>`,
    ...optionProgress(parts, option, t, amountText)
  ]
  const actions = walletActions(option, t, uri, destination, atomic)
  lines.push(html`<div class="pay-here">`)
  if (actions.length > 0) lines.push(html`<p class="actions">${joined(actions, " ")}</p>`)
  if (uri !== null) lines.push(html`<figure class="qr" role="img" aria-label="${t.scan}">${raw(qrSvg(uri))}</figure>`)
  lines.push(html`</div>`)
  if (destination !== "") {
    lines.push(
      html`<p class="address-label">${t.toAddress}</p>`,
      html`<p class="address"><code class="address-text">${addressGroups(destination).map((group) => html`<span>${group}</span>`)}</code> ${
        copyButton(t, t.copyAddress, destination)
      }</p>`,
      html`<p class="send-only" role="note">${fill(t.sendOnly, { asset: option.assetCode, network: networkName(t, option.network) })}</p>`
    )
  }
  lines.push(html`<p class="wallet-status" role="status" aria-live="polite" data-keep="wallet"></p>`, html`</section>`)
  return joined(lines)
}

const optionLabel = (t: Strings, option: PaymentOptionRecord) =>
  html`${raw(assetIcon(option.assetCode))}<span>${`${option.assetCode} · ${networkName(t, option.network)}`}</span>${raw(networkIcon(option.network))}`

/** Tabs choosing among `options` (links that work without the script), or the one option's name. */
const optionChoice = (t: Strings, options: ReadonlyArray<PaymentOptionRecord>, selected: PaymentOptionRecord) =>
  options.length > 1
    ? [
      html`<nav class="options" aria-label="${t.options}">`,
      ...options.map((option) =>
        html`<a class="option-tab" href="?option=${option.id}" data-option-id="${option.id}"${option.id === selected.id ? html` aria-current="true"` : ""}>${
          optionLabel(t, option)
        }</a>`
      ),
      html`</nav>`
    ]
    : [html`<p class="single-option">${assetOnNetwork(t, selected.assetCode, selected.network)}</p>`]

/**
 * The payable options. After a partial payment the page leads with the option already paid into
 * (what remains is due there); the others fold behind "Pay the rest another way", so that the
 * payer is not invited to split the rest across networks.
 */
export const payableOptions = (parts: InvoiceParts, t: Strings, ordered: ReadonlyArray<PaymentOptionRecord>, selected: PaymentOptionRecord,
  lead: PaymentOptionRecord | undefined) =>
{
  const lines = [html`<div class="pay-options">`]
  const group = (options: ReadonlyArray<PaymentOptionRecord>, chosen: PaymentOptionRecord) => [
    html`<div class="option-group">`,
    ...optionChoice(t, options, chosen),
    ...options.map((option) => optionSection(parts, option, t, option.id === chosen.id)),
    html`</div>`
  ]
  if (lead === undefined) lines.push(...group(ordered, selected))
  else {
    lines.push(html`<div class="option-group">`, html`<p class="single-option">${assetOnNetwork(t, lead.assetCode, lead.network)}</p>`, optionSection(parts, lead, t, true),
      html`</div>`)
    const others = ordered.filter((option) => option.id !== lead.id)
    if (others.length > 0) {
      const chosen = others.find((option) => option.id === selected.id)
      lines.push(
        html`<details class="other-options"${chosen === undefined ? "" : " open"}>`,
        html`<summary>${t.payRestElsewhere}</summary>`,
        ...group(others, chosen ?? others[0]),
        html`</details>`
      )
    }
  }
  lines.push(html`</div>`)
  return lines
}
