/// <reference lib="dom" />
import type { PayStatus } from "./Api.ts"
import { followStatus, type PublicStatus } from "./LiveStatus.ts"
import { morph } from "./Morph.ts"
import { pageFingerprint } from "../PageFingerprint.ts"

/** Statuses after which nothing changes on the page by itself (the server ends the stream there too). */
export const FINAL = new Set(["confirmed", "paid_out_of_band"])

const microsOf = (status: PublicStatus) => BigInt(Math.round(status.receivedAmountUsd * 1_000_000)).toString()

/**
 * Keeps the page in step with its invoice without navigating: each pushed (or polled) status that
 * differs from what the page shows fetches the page's markup again from the server and morphs the
 * open page into it (Morph.ts). A new payment selects the option it went to (the URL's `?option=`
 * follows, by replaceState). Changes that arrive during a fetch are coalesced into one more fetch.
 * `updated` runs after each redraw.
 */
export const followPage = (main: HTMLElement, invoiceId: string, updated: () => void) => {
  const data = main.dataset
  let fetching = false
  let again = false
  let wanted: { optionId: string | null } = { optionId: null }

  const shows = (status: PublicStatus) => pageFingerprint(status) === data.fingerprint

  const redraw = async () => {
    if (fetching) return void (again = true)
    fetching = true
    try {
      const search = new URLSearchParams(location.search)
      if (wanted.optionId !== null) search.set("option", wanted.optionId)
      wanted = { optionId: null }
      const query = search.toString() === "" ? "" : `?${search}`
      const response = await fetch(`${location.pathname}${query}`, { headers: { accept: "text/html" } })
      if (!response.ok) return
      const next = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("main.card")
      if (next === null) return
      if (query !== location.search) history.replaceState(null, "", query === "" ? location.pathname : query)
      morph(main, next)
      updated()
    } catch {
      // Offline for a moment: the next change (or poll) tries again.
    } finally {
      fetching = false
      if (again) {
        again = false
        void redraw()
      }
    }
  }

  const onStatus = (status: PublicStatus) => {
    if (shows(status)) return false
    const paid = (status as PayStatus).lastPaymentOptionId
    // A new payment: the page shows the option it went to, with what remains there.
    // Without an explicit choice in the URL the server shows that option anyway: the URL stays as it is.
    const explicit = new URLSearchParams(location.search).get("option")
    if (microsOf(status) !== data.received && paid !== null && explicit !== null && explicit !== paid) wanted = { optionId: paid }
    void redraw()
    return true
  }

  startFollowing(invoiceId, onStatus, () => FINAL.has(data.status ?? ""))
}

/** The status stream first; polling with back-off (paused while the tab is hidden) when the stream cannot be had. */
const startFollowing = (invoiceId: string, onStatus: (status: PublicStatus) => boolean, finished: () => boolean) => {
  if (finished()) return
  let delay = 2_000
  let timer: ReturnType<typeof setTimeout> | undefined
  let streaming = false
  const schedule = () => {
    clearTimeout(timer)
    if (!document.hidden && !streaming && !finished()) timer = setTimeout(poll, delay)
  }
  const poll = async () => {
    try {
      const response = await fetch(`/api/checkout/pay/${invoiceId}/status`, { headers: { accept: "application/json" } })
      if (response.ok) delay = onStatus((await response.json()) as PayStatus) ? 2_000 : Math.min(delay * 1.5, 15_000)
      else delay = Math.min(delay * 2, 30_000)
    } catch {
      delay = Math.min(delay * 2, 30_000)
    }
    schedule()
  }
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) delay = 2_000
    schedule()
  })
  streaming = followStatus(invoiceId, (status) => void onStatus(status), () => {
    streaming = false
    schedule()
  })
  schedule()
}
