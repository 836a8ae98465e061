/**
 * Command-line client of the development simulator routes (development mode only).
 *
 *   npm run simulate -- pay <invoiceId> [paymentOptionId] [amount] [--confirmations N] [--late] [--tx HASH]
 *   npm run simulate -- confirm <invoiceId> <transactionHash> <confirmations>
 *   npm run simulate -- reorg <invoiceId> <transactionHash> [reason]
 *   npm run simulate -- expire <invoiceId>
 *
 * Finds the service as its start banner does (HOST and PORT, default http://127.0.0.1:3000), or
 * at CHECKOUT_URL when set. Signs in with CHECKOUT_EMAIL / CHECKOUT_PASSWORD (the demo merchant's
 * by default), or uses CHECKOUT_TOKEN when set. Prints a one-line summary; --json prints the answer.
 *
 * `pay` defaults the option to the invoice's `defaultPaymentOptionId`, the amount to that option's
 * whole quoted amount, and the transaction to a fresh hash, so a second invoice never collides
 * with the first one's transaction. npm echoes the command with every id masked as `***` (its log
 * redaction of UUIDs): the script prints the ids it uses itself.
 */
import { randomBytes } from "node:crypto"
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

/** A hash no other simulated payment has (evidence is unique by network and transaction: a fixed one answers 409 on a second invoice). */
const freshTransactionHash = () => `0x${randomBytes(32).toString("hex")}`

interface InvoiceOptions {
  readonly defaultPaymentOptionId: string | null
  readonly paymentOptions: ReadonlyArray<{ readonly id: string; readonly quotedAmount: number; readonly assetCode: string; readonly network: string }>
}

const invoiceOptions = async (): Promise<InvoiceOptions> => {
  const response = await fetch(`${base}/api/dashboard/invoices/${invoiceId}`, { headers: { authorization: `Bearer ${await token()}` } })
  if (!response.ok) {
    console.error(`cannot read invoice ${invoiceId}: ${response.status} ${await response.text()}`)
    process.exit(1)
  }
  return ((await response.json()) as { invoice: InvoiceOptions }).invoice
}

/** The option and amount to pay: as given (a number is the amount, anything else the option), else the invoice's default option and its whole quoted amount. */
const paymentOf = async (given: ReadonlyArray<string>) => {
  const amountGiven = given.find((value) => /^\d+(\.\d+)?$/.test(value))
  const optionGiven = given.find((value) => value !== amountGiven)
  const invoice = await invoiceOptions()
  const paymentOptionId = optionGiven ?? invoice.defaultPaymentOptionId
  const option = invoice.paymentOptions.find((candidate) => candidate.id === paymentOptionId)
  if (option === undefined) {
    console.error(`invoice ${invoiceId} has no payment option ${paymentOptionId ?? "(and no default)"}; its options: ${invoice.paymentOptions.map((entry) => entry.id).join(", ")}`)
    process.exit(1)
  }
  // Plain decimals, never exponent notation (a tiny bitcoin amount prints as 1e-7).
  const amount = amountGiven ?? option.quotedAmount.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 })
  console.log(
    `paying invoice ${invoiceId}: option ${option.id} (${option.assetCode} on ${option.network}${optionGiven === undefined ? ", the invoice's default" : ""}), amount ${amount}`
  )
  return { paymentOptionId: option.id, amount }
}

const usage = () => {
  console.error([
    "usage: npm run simulate -- pay <invoiceId> [paymentOptionId] [amount] [--confirmations N] [--late] [--tx HASH] [--json]",
    "         (default: the invoice's defaultPaymentOptionId, its whole quoted amount, a fresh transaction hash)",
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
    const { paymentOptionId, amount } = await paymentOf(rest)
    await call("simulate-payment", {
      paymentOptionId,
      amount,
      transactionHash: tx ?? freshTransactionHash(),
      ...(confirmations === undefined ? {} : { confirmations: Number(confirmations) }),
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
