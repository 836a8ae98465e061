/** API keys: create (shown once), list by prefix, revoke. */

import type { ApiKey, CreatedKey, KeyList } from "./Api.ts"
import { api, cardTable, copyButton, h, show, submitting, userId, when } from "./Ui.ts"

export const keysView = async (created?: CreatedKey) => {
  const base = `/api/users/${userId()}`
  const { keys } = await api<KeyList>("GET", `${base}/checkout-api-keys`)
  const form = h("form", { class: "inline-form" }, h("label", {}, "Label", h("input", { name: "label", maxlength: "100", "data-field": "label" })),
    h("button", { type: "submit" }, "Create API key")) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const key = await api<CreatedKey>("POST", `${base}/checkout-api-key`, { label: new FormData(form).get("label") })
    await keysView(key)
  }))
  show(h("h1", {}, "API keys"),
    h("p", {}, "Keys call the five invoice endpoints from your server. At most 3 are active at once: revoke one to create another. A key is shown only when it is created."),
    created === undefined ?
      null :
      h("div", { class: "card secret", role: "status" }, h("p", {}, "Your new key (copy it now: it is not shown again):"),
        h("code", { class: "mono", id: "new-key" }, created.rawKey), copyButton(created.rawKey)), form,
    cardTable(["Prefix", "Label", "Created", ""],
      keys.map((key: ApiKey) =>
        h("tr", { "data-key": key.id }, h("td", { class: "mono title" }, `${key.keyPrefix}…`), h("td", {}, key.label), h("td", {}, when(key.createdAt)),
          h("td", { class: "row-actions" }, h("button", { type: "button", onclick: async () => {
            if (!confirm(`Revoke ${key.keyPrefix}…? Requests with it fail at once.`)) return
            await api("DELETE", `${base}/checkout-api-key/${key.id}`)
            await keysView()
          } }, "Revoke")))
      )))
}
