/**
 * Live or test data (issue #55): the dashboard shows one at a time. The choice is kept in
 * localStorage, so that it holds across views and reloads, and every read of money data asks the
 * API for the mode shown (`livemode=false` for test data). While test data is shown, a banner says
 * so in words, not only in colour.
 */

const KEY = "checkout.viewingTestData"

export const viewingTestData = () => localStorage.getItem(KEY) === "true"

/** `path` asking for the data of the mode shown: `livemode=false` added while test data is shown. */
export const inMode = (path: string) => viewingTestData() ? `${path}${path.includes("?") ? "&" : "?"}livemode=false` : path

const showMode = (toggle: HTMLInputElement, banner: HTMLElement) => {
  const test = viewingTestData()
  toggle.checked = test
  banner.hidden = !test
  document.body.classList.toggle("test-data", test)
}

/**
 * Wires the header's switch "Viewing test data" and the banner; `redraw` draws the current view
 * again in the mode chosen.
 */
export const wireModeSwitch = (redraw: () => void) => {
  const toggle = document.getElementById("test-data") as HTMLInputElement
  const banner = document.getElementById("test-banner")!
  showMode(toggle, banner)
  toggle.addEventListener("change", () => {
    if (toggle.checked) localStorage.setItem(KEY, "true")
    else localStorage.removeItem(KEY)
    showMode(toggle, banner)
    redraw()
  })
  // Another tab changed the mode: follow it.
  addEventListener("storage", (event) => {
    if (event.key !== KEY) return
    showMode(toggle, banner)
    redraw()
  })
}
