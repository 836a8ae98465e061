/**
 * Command-line client of the development simulator routes (development mode only).
 *
 *   npm run simulate -- pay <invoiceId> <paymentOptionId> <amount> [--confirmations N] [--late] [--tx HASH]
 *   npm run simulate -- confirm <invoiceId> <transactionHash> <confirmations>
 *   npm run simulate -- reorg <invoiceId> <transactionHash> [reason]
 *   npm run simulate -- expire <invoiceId>
 *
 * Finds the service as its start banner does (HOST and PORT, default http://127.0.0.1:3000), or
 * at CHECKOUT_URL when set. Signs in with CHECKOUT_EMAIL / CHECKOUT_PASSWORD (the demo merchant's
 * by default), or uses CHECKOUT_TOKEN when set. Prints a one-line summary; --json prints the answer.
 */
import { parseConfig } from "../src/config/AppConfig.ts"
import { DEMO_EMAIL, DEMO_PASSWORD } from "../src/demo/DemoMerchant.ts"
import { serviceUrl } from "../src/demo/ServiceUrl.ts"
import { expiryHeldBack } from "./expiry-hold.ts"

const base = (process.env.CHECKOUT_URL ?? serviceUrl(parseConfig({ ...process.env, CHECKOUT_ENV: "development" }))).replace(/\/+$/, "")
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
const asJson = args.includes("--json")
if (asJson) args.splice(args.indexOf("--json"), 1)
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

/** One line a person can read: where the invoice stands, and the transaction to use next. */
const summary = (body: any): string => {
  const invoice = body.invoice ?? body
  const parts = [
    `invoice ${invoice.id}: ${invoice.status}`,
    `received ${invoice.receivedAmountUsd} of ${invoice.amountUsd} USD`,
    `confirmations ${invoice.confirmations}`
  ]
  if (invoice.exceptionType != null) parts.push(`exception ${invoice.exceptionType} (${invoice.exceptionStatus})`)
  const line = parts.join(", ")
  if (body.payment === undefined) return line
  const payment = body.payment
  const state = payment.invalidatedAt === null ? `${payment.confirmations} confirmations` : `invalidated (${payment.invalidationReason})`
  return `${line}\npayment ${payment.amountReceived} ${payment.assetCode} on ${payment.network}, ${state}\ntransaction ${payment.transactionHash} (for confirm and reorg)`
}

const call = async (action: string, body: unknown) => {
  let response: Response
  try {
    response = await fetch(`${base}/api/dev/invoices/${invoiceId}/${action}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await token()}` },
      body: JSON.stringify(body)
    })
  } catch (error) {
    console.error(`cannot reach the service at ${base} (${(error as Error).cause ?? error}); start it with npm start, or set CHECKOUT_URL`)
    process.exit(1)
  }
  const text = await response.text()
  if (!response.ok) {
    console.error(`${response.status} ${text}`)
    process.exit(1)
  }
  console.log(asJson ? text : summary(JSON.parse(text)))
  return JSON.parse(text)
}

const usage = () => {
  console.error([
    "usage: npm run simulate -- pay <invoiceId> <paymentOptionId> <amount> [--confirmations N] [--late] [--tx HASH] [--json]",
    "       npm run simulate -- confirm <invoiceId> <transactionHash> <confirmations>",
    "       npm run simulate -- reorg <invoiceId> <transactionHash> [reason]",
    "       npm run simulate -- expire <invoiceId>",
    `service: ${base} (CHECKOUT_URL, else HOST and PORT as for npm start)`
  ].join("\n"))
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
  case "expire": {
    const invoice = await call("simulate-expiry", {})
    const watchers = await fetch(`${base}/api/dashboard/chain-watchers`, { headers: { authorization: `Bearer ${await token()}` } })
    if (watchers.ok) { for (const line of expiryHeldBack(invoice, ((await watchers.json()) as any).watchers)) console.log(line) }
    break
  }
  default:
    usage()
}
