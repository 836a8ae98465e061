import type { Product } from "./Catalog.ts"
import { CATCH_UP_EVENT, type Order } from "./Orders.ts"

const escape = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)
const usd = (amount: number) => `$${amount.toFixed(2)}`

const layout = (title: string, body: string, head = "") =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Example shop</title>
${head}
<style>
  body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1f; }
  .product { border: 1px solid #d0d0d7; border-radius: 0.5rem; padding: 1rem; margin: 1rem 0; }
  button, .button { background: #2952cc; color: #fff; border: 0; border-radius: 0.4rem; padding: 0.6rem 1rem; font-size: 1rem; text-decoration: none; cursor: pointer; }
  .status { display: inline-block; padding: 0.2rem 0.6rem; border-radius: 1rem; background: #eee; }
  .status.paid { background: #d3f2dc; color: #0b5f2a; }
  .status.cancelled { background: #f7d9d9; color: #8a1c1c; }
</style>
</head>
<body>
<header><a href="/">Example shop</a></header>
<main>
${body}
</main>
</body>
</html>
`

/** The catalogue: one "Buy" form per product, posting to /checkout. */
export const productPage = (products: ReadonlyArray<Product>) =>
  layout(
    "Products",
    `<h1>Products</h1>
${
      products.map((product) =>
        `<section class="product">
  <h2>${escape(product.name)}</h2>
  <p>${escape(product.description)}</p>
  <p class="price">${usd(product.priceUsd)}</p>
  <form method="post" action="/checkout">
    <input type="hidden" name="product" value="${escape(product.id)}">
    <button type="submit">Buy ${escape(product.name)} with crypto</button>
  </form>
</section>`
      ).join("\n")
    }`
  )

const STATUS_WORDS: Record<Order["status"], string> = { awaiting_payment: "Awaiting payment", paid: "Paid", cancelled: "Cancelled" }

const howPaid = (order: Order) => {
  const receipt = order.paidThrough
  if (receipt === null) return ""
  const after = receipt.event === CATCH_UP_EVENT
    ? "the shop's catch-up at start"
    : `the checkout service's <code>${escape(receipt.event)}</code> webhook (delivery ${escape(receipt.delivery ?? "unknown")})`
  return `<p class="paid-through">Marked paid at ${escape(receipt.receivedAt)} after ${after}, once the invoice fetched from the service was <code>${
    escape(receipt.invoiceStatus)
  }</code>.</p>`
}

/**
 * The embedded checkout (checkout.js from the service, issue #57): the button opens the payment page
 * over this page and its events show the payer what happens. They are for the payer's eyes only:
 * the order is marked paid by the verified webhook, and this page reloads from the shop to show it
 * (never while the payment window is open).
 */
const payButton = (paymentUrl: string) =>
  `<p>We ship as soon as the payment is confirmed.</p>
<p><checkout-invoicing-button payment-url="${escape(paymentUrl)}">Pay with crypto</checkout-invoicing-button>
<a href="${escape(paymentUrl)}">or open the payment page</a></p>
<p class="live-status" role="status" aria-live="polite"></p>
<script>
  const WORDS = { awaiting_payment: "Waiting for your payment…", partially_paid: "Part of the payment arrived…", payment_detected: "Payment detected: waiting for confirmations…",
    confirmed: "Payment confirmed. Your order is marked paid as soon as our server hears it.", closed: "Payment window closed." }
  document.addEventListener("checkout-status", (event) => {
    document.querySelector(".live-status").textContent = WORDS[event.detail.status] ?? event.detail.status
  })
  setInterval(() => document.querySelector("[data-checkout-invoicing]") === null && location.reload(), 3000)
</script>`

/** One order: its status as the shop knows it. While it waits for payment the page reloads itself (from the shop, never from the service). */
export const orderPage = (order: Order) =>
  layout(
    `Order ${order.id}`,
    `<h1>Your order</h1>
<p>${escape(order.productName)}, ${usd(order.amountUsd)}</p>
<p>Order <code>${escape(order.id)}</code>: <span class="status ${order.status}" data-order-status="${order.status}">${STATUS_WORDS[order.status]}</span></p>
${howPaid(order)}
${order.status === "awaiting_payment" && order.paymentUrl !== null ? payButton(order.paymentUrl) : ""}`,
    order.status === "awaiting_payment" && order.paymentUrl !== null
      ? `<script src="${escape(new URL("/checkout.js", order.paymentUrl).href)}"></script>`
      : order.status === "awaiting_payment"
      ? `<meta http-equiv="refresh" content="3">`
      : ""
  )

export const messagePage = (title: string, message: string) => layout(title, `<h1>${escape(title)}</h1>\n<p>${escape(message)}</p>`)
