/**
 * Command-line client of the development simulator routes (development mode only).
 *
 *   npm run simulate -- pay <invoiceId> <paymentOptionId> <amount> [--confirmations N] [--late] [--tx HASH]
 *   npm run simulate -- confirm <invoiceId> <transactionHash> <confirmations>
 *   npm run simulate -- reorg <invoiceId> <transactionHash> [reason]
 *   npm run simulate -- expire <invoiceId>
 *
 * Signs in with CHECKOUT_EMAIL / CHECKOUT_PASSWORD (the demo merchant's by default) against
 * CHECKOUT_URL (http://127.0.0.1:3000 by default), or uses CHECKOUT_TOKEN when set.
 */
import { DEMO_EMAIL, DEMO_PASSWORD } from "../src/demo/DemoMerchant.ts"

const base = (process.env.CHECKOUT_URL ?? "http://127.0.0.1:3000").replace(/\/+$/, "")
const args = process.argv.slice(2)
const flag = (name: string) => {
  const index = args.indexOf(`--${name}`)
  if (index === -1) return undefined
  const value = args[index + 1]
  args.splice(index, 2)
  return value
}
const late = args.includes("--late")
if (late) args.splice(args.indexOf("--late"), 1)
const confirmations = flag("confirmations")
const tx = flag("tx")
const [command, invoiceId, ...rest] = args

const token = async (): Promise<string> => {
  if (process.env.CHECKOUT_TOKEN !== undefined) return process.env.CHECKOUT_TOKEN
  const response = await fetch(`${base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: process.env.CHECKOUT_EMAIL ?? DEMO_EMAIL, password: process.env.CHECKOUT_PASSWORD ?? DEMO_PASSWORD })
  })
  if (!response.ok) throw new Error(`login failed: ${response.status} ${await response.text()}`)
  return ((await response.json()) as { token: string }).token
}

const call = async (action: string, body: unknown) => {
  const response = await fetch(`${base}/api/dev/invoices/${invoiceId}/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${await token()}` },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  console.log(response.status, text)
  if (!response.ok) process.exit(1)
}

const usage = () => {
  console.error("usage: npm run simulate -- pay|confirm|reorg|expire <invoiceId> ... (see scripts/simulate.ts)")
  process.exit(2)
}

if (invoiceId === undefined) usage()
switch (command) {
  case "pay": {
    const [paymentOptionId, amount] = rest
    if (amount === undefined) usage()
    await call("simulate-payment", {
      paymentOptionId,
      amount,
      ...(confirmations === undefined ? {} : { confirmations: Number(confirmations) }),
      ...(tx === undefined ? {} : { transactionHash: tx }),
      ...(late ? { late: true } : {})
    })
    break
  }
  case "confirm":
    await call("simulate-confirmations", { transactionHash: rest[0], confirmations: Number(rest[1]) })
    break
  case "reorg":
    await call("simulate-invalidation", { transactionHash: rest[0], ...(rest[1] === undefined ? {} : { reason: rest[1] }) })
    break
  case "expire":
    await call("simulate-expiry", {})
    break
  default:
    usage()
}
