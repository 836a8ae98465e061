/// <reference lib="dom" />
import type { ApiError, SimulateTestPaymentBody } from "./Api.ts"

/**
 * "Simulate payment" on a test invoice's page (issue #55): pays the option shown, in full or in
 * part, through the public simulate endpoint; the page then follows the status as for any payment.
 */
export const simulatePayment = async (invoiceId: string, button: HTMLButtonElement) => {
  const status = document.querySelector<HTMLElement>(".test-simulate-status")
  const shown = document.querySelector<HTMLElement>(".pay-options section.option:not([hidden])")?.dataset.optionId
  const body: SimulateTestPaymentBody = { kind: button.dataset.simulate === "partial" ? "partial" : "full", ...(shown === undefined ? {} : { paymentOptionId: shown }) }
  if (status !== null) status.textContent = status.dataset.simulating ?? ""
  button.disabled = true
  try {
    const response = await fetch(`/api/checkout/pay/${invoiceId}/simulate-payment`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    if (!response.ok) throw new Error(((await response.json().catch(() => undefined)) as ApiError | undefined)?.error ?? `HTTP ${response.status}`)
  } catch (error) {
    if (status !== null) status.textContent = `${status.dataset.failed ?? ""}: ${error instanceof Error ? error.message : String(error)}`
  } finally {
    button.disabled = false
  }
}
