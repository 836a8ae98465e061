/**
 * Links out of the dashboard: a transaction to its network's block explorer, and an invoice's
 * payment page. The explorers are the payer page's (../../pay/Explorers.ts, configured per
 * deployment), handed to this script by the page (`data-explorers`) rather than kept here.
 */

import { h } from "./Ui.ts"

let explorers: Readonly<Record<string, string>> | undefined
const explorerTemplates = () => explorers ??= JSON.parse(document.body.dataset.explorers ?? "{}") as Readonly<Record<string, string>>

/** The explorer's page of a transaction on `network`, or undefined for a network without one. */
export const transactionUrl = (network: string, hash: string): string | undefined => explorerTemplates()[network]?.replace("{tx}", encodeURIComponent(hash))

/** A transaction hash, linked to the network's explorer (opened in a new tab) where there is one. */
export const transactionLink = (network: string, hash: string) => {
  const url = transactionUrl(network, hash)
  return url === undefined
    ? h("code", { class: "mono" }, hash)
    : h("a", { class: "mono transaction-link", href: url, target: "_blank", rel: "noopener noreferrer", "data-network": network }, hash)
}

/** The invoice's hosted payment page, as the payer sees it (a new tab). */
export const paymentPageLink = (url: string) => h("a", { class: "mono", href: url, target: "_blank", rel: "noopener" }, url)
