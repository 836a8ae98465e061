/** Sign-up, log-in and log-out. */

import type { AuthAnswer } from "./Api.ts"
import { api, h, show, submitting } from "./Ui.ts"

export const authView = (mode: "login" | "signup") => {
  const form = h("form", { class: "card narrow" }, h("h1", {}, mode === "login" ? "Log in" : "Create your merchant account"),
    h("label", {}, "Email", h("input", { name: "email", type: "email", autocomplete: "email", required: true, "data-field": "email" })),
    h("label", {}, "Password",
      h("input", { name: "password", type: "password", autocomplete: mode === "login" ? "current-password" : "new-password", required: true, "data-field": "password" })),
    h("button", { type: "submit" }, mode === "login" ? "Log in" : "Sign up"),
    h("p", {}, mode === "login" ? h("a", { href: "#/signup" }, "Create an account") : h("a", { href: "#/login" }, "I have an account"))) as HTMLFormElement
  form.addEventListener("submit", submitting(form, async () => {
    const data = new FormData(form)
    const result = await api<AuthAnswer>("POST", `/api/auth/${mode}`, { email: data.get("email"), password: data.get("password") })
    localStorage.setItem("checkout.userId", result.user.id)
    localStorage.setItem("checkout.email", result.user.email)
    location.hash = mode === "signup" ? "#/settings" : "#/overview"
  }))
  show(form)
}

export const logout = async () => {
  await api("POST", "/api/auth/logout").catch(() => undefined)
  localStorage.removeItem("checkout.userId")
  location.hash = "#/login"
}
