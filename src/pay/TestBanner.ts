import { type Html, html, joined } from "./Html.ts"
import type { Strings } from "./Strings.ts"

/**
 * The top of a test invoice's page (issue #55): in words, not only in colour, that it is a test and
 * that no real funds should be sent; while it is payable, "Simulate payment" in full or in part
 * (the script posts to the public simulate endpoint, and the page follows the status as ever).
 */
export const testBanner = (t: Strings, payable: boolean): Html => {
  const lines = [
    html`<div class="test-mode" id="test-mode">`,
    html`<p class="test-mode-notice"><strong class="test-mode-title">${t.test.title}</strong> ${t.test.notice}</p>`
  ]
  if (payable) {
    lines.push(
      html`<p class="test-simulate"><button type="button" class="button" data-simulate="full">${t.test.simulate}</button> <button type="button" class="button" data-simulate="partial">${t.test.simulatePartial}</button></p>`,
      html`<p class="test-simulate-status" role="status" data-simulating="${t.test.simulating}" data-failed="${t.test.failed}"></p>`
    )
  }
  lines.push(html`</div>`)
  return joined(lines)
}
