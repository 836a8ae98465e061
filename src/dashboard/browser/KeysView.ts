/** API keys: create (live or test, shown once), list by prefix with their mode, revoke. */

import type { ApiKey, CreatedKey, KeyList } from "./Api.ts"
import { viewingTestData } from "./Mode.ts"
import { api, cardTable, copyButton, h, select, show, submitting, userId, when } from "./Ui.ts"

/** The mode in words (never in colour only): "Live" or "Test". */
const MODE_WORDS: Record<ApiKey["mode"], string> = { live: "Live", test: "Test" }
const modeWords = (mode: string) => MODE_WORDS[mode as ApiKey["mode"]] ?? mode

export const keysView = async (created?: CreatedKey) => {
  const base = `/api/users/${userId()}`
  const { keys } = await api<KeyList>("GET", `${base}/checkout-api-keys`)
  // While test data is shown, a new key is a test key unless the merchant picks live.
  const form = h("form", { class: "inline-form" }, h("label", {}, "Label", h("input", { name: "label", maxlength: "100", "data-field": "label" })),
    select("mode", "Mode", ["live", "test"], viewingTestData() ? "test" : "live", "", modeWords), h("button", { type: "submit" }, "Create API key")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const data = new FormData(form)
    const key = await api<CreatedKey>("POST", `${base}/checkout-api-key`, { label: data.get("label"), mode: data.get("mode") })
    await keysView(key)
  }))
  const secret = created === undefined ?
    null :
    h("div", { class: "card secret", role: "status" }, h("p", {}, `Your new ${created.mode} key (copy it now: it is not shown again):`),
      h("code", { class: "mono", id: "new-key" }, created.rawKey), copyButton(created.rawKey))
  show(h("h1", {}, "API keys"),
    h("p", {}, "Keys call the five invoice endpoints from your server. A live key (svc_live_…) makes real invoices; a test key (svc_test_…) makes test invoices, " +
      "which you pay with the test helpers and which stay out of live data. Live and test keys each have their own limit of 3 active keys: " +
      "revoke one to create another of its mode. A key is shown only when it is created."), secret, form,
    cardTable(["Prefix", "Mode", "Label", "Created", ""],
      keys.map((key: ApiKey) =>
        h("tr", { "data-key": key.id, "data-mode": key.mode }, h("td", { class: "mono title" }, `${key.keyPrefix}…`),
          h("td", {}, h("span", { class: `status mode-${key.mode}` }, modeWords(key.mode))), h("td", {}, key.label), h("td", {}, when(key.createdAt)),
          h("td", { class: "row-actions" }, h("button", { type: "button", "aria-label": `Revoke ${key.keyPrefix}…`, onclick: async () => {
            if (!confirm(`Revoke ${key.keyPrefix}…? Requests with it fail at once.`)) return
            await api("DELETE", `${base}/checkout-api-key/${key.id}`)
            await keysView()
          } }, "Revoke")))
      )))
}
