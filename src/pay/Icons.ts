/**
 * Network and token marks of the payment page, as inline SVG (the page makes no request outside
 * its origin and its CSP allows no remote image). Simplified shapes in each brand's colour,
 * decorative: the name is always written next to them. No `<text>` element, so that a mark adds
 * nothing to the text of what it labels.
 */

const svg = (kind: string, name: string, body: string) =>
  `<svg class="icon icon-${kind}" data-icon="${name.replace(/[^A-Za-z0-9_-]/g, "")}" viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" focusable="false">${body}</svg>`

const NETWORK_MARKS: Readonly<Record<string, string>> = {
  ethereum:
    `<circle cx="12" cy="12" r="12" fill="#627eea"/><path fill="#fff" fill-opacity=".6" d="M12 3.5v6.3l5.3 2.4z"/><path fill="#fff" d="M12 3.5 6.7 12.2 12 9.8z"/><path fill="#fff" fill-opacity=".6" d="M12 16.3v4.2l5.3-7.4z"/><path fill="#fff" d="M12 20.5v-4.2l-5.3-3.2z"/><path fill="#fff" fill-opacity=".2" d="m12 15.3 5.3-3.1L12 9.8z"/><path fill="#fff" fill-opacity=".6" d="m6.7 12.2 5.3 3.1V9.8z"/>`,
  arbitrum:
    `<circle cx="12" cy="12" r="12" fill="#213147"/><path fill="none" stroke="#28a0f0" stroke-width="2" stroke-linejoin="round" d="M12 4.5 18.5 8.2v7.6L12 19.5l-6.5-3.7V8.2z"/><path fill="#fff" d="m9.2 16.4 3.6-8.3h1.7l-3.6 8.3zm3.7 0 2-4.6 1 2.3-1 2.3z"/>`,
  base: `<circle cx="12" cy="12" r="12" fill="#0052ff"/><path fill="#fff" d="M12 19.3a7.3 7.3 0 1 0-7.3-8h9.6v1.4H4.7a7.3 7.3 0 0 0 7.3 6.6z"/>`,
  solana:
    `<circle cx="12" cy="12" r="12" fill="#000"/><path fill="#14f195" d="M7.6 15h10l-1.9 2H5.7z"/><path fill="#9945ff" d="M7.6 7h10l-1.9 2H5.7z"/><path fill="#43b4ca" d="M5.7 11h10l1.9 2h-10z"/>`,
  bitcoin:
    `<circle cx="12" cy="12" r="12" fill="#f7931a"/><path fill="none" stroke="#fff" stroke-width="1.8" stroke-linejoin="round" d="M8.5 6.5h4.3a2.6 2.6 0 0 1 0 5.2H8.5zm0 5.2h4.9a2.9 2.9 0 0 1 0 5.8H8.5z"/><path stroke="#fff" stroke-width="1.5" d="M10.5 4.5v2m2.4-2v2m-2.4 11v2m2.4-2v2"/>`
}

const ASSET_MARKS: Readonly<Record<string, string>> = {
  USDC:
    `<circle cx="12" cy="12" r="12" fill="#2775ca"/><path fill="none" stroke="#fff" stroke-width="1.2" d="M9.3 5.3a7.2 7.2 0 0 0 0 13.4m5.4 0a7.2 7.2 0 0 0 0-13.4"/><path fill="none" stroke="#fff" stroke-width="1.5" stroke-linecap="round" d="M14.3 9.4c-.3-.9-1.2-1.4-2.3-1.4-1.3 0-2.3.7-2.3 1.7 0 2.4 4.7 1.3 4.7 3.7 0 1-1 1.8-2.4 1.8-1.2 0-2.1-.6-2.4-1.4M12 6.6V8m0 7.3v1.4"/>`,
  USDT:
    `<circle cx="12" cy="12" r="12" fill="#26a17b"/><path fill="#fff" d="M6.5 6.8h11v2.3h-4.3v9.4h-2.4V9.1H6.5z"/><ellipse cx="12" cy="11.4" rx="5.2" ry="1.3" fill="none" stroke="#fff" stroke-width="1"/>`,
  BTC: NETWORK_MARKS.bitcoin
}

const FALLBACK = `<circle cx="12" cy="12" r="12" fill="#6b7280"/><circle cx="12" cy="12" r="4" fill="#fff"/>`

/** The mark of a network (a neutral disc for one it does not know). */
export const networkIcon = (network: string) => svg("network", network, NETWORK_MARKS[network] ?? FALLBACK)

/** The mark of a token or coin (a neutral disc for one it does not know). */
export const assetIcon = (assetCode: string) => svg("asset", assetCode, ASSET_MARKS[assetCode] ?? FALLBACK)
