import type { Strings } from "./Strings.ts"

const escape = (text: string): string => text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[char]!)

/**
 * The top of a test invoice's page (issue #55): in words, not only in colour, that it is a test and
 * that no real funds should be sent; while it is payable, "Simulate payment" in full or in part
 * (the script posts to the public simulate endpoint, and the page follows the status as ever).
 */
export const testBanner = (t: Strings, payable: boolean): string => {
  const lines = [
    `<div class="test-mode" id="test-mode">`,
    `<p class="test-mode-notice"><strong class="test-mode-title">${escape(t.test.title)}</strong> ${escape(t.test.notice)}</p>`
  ]
  if (payable) {
    lines.push(
      `<p class="test-simulate"><button type="button" class="button" data-simulate="full">${
        escape(t.test.simulate)
      }</button> <button type="button" class="button" data-simulate="partial">${escape(t.test.simulatePartial)}</button></p>`,
      `<p class="test-simulate-status" role="status" data-simulating="${escape(t.test.simulating)}" data-failed="${escape(t.test.failed)}"></p>`
    )
  }
  lines.push("</div>")
  return lines.join("\n")
}
