/**
 * The raw baseline of `npm run bench`: a minimal `node:http` + `pg` server doing the same SQL
 * work per request as the service (same statements, same order, same transaction), without
 * Effect and without schema validation/encoding, but with the work the spec requires of a create,
 * done by the service's own code: BIP32 child derivation (EVM deposit addresses, once per key and
 * index as the service; the bitcoin pool's refills) with the same libsecp256k1 code, each URI's
 * QR code with the same encoder, the Solana reference key, the forwarder's CREATE2 address. It
 * runs them inline: the CPU per request counts every thread of either process.
 *
 * Per request, as the service:
 * - API-key routes: the key lookup joined to merchants, then the rate-limit upsert (same fixed
 *   window statement as src/accounts/PgRateLimiterStore.ts, same limit);
 * - create: checkout settings with methods (one select), the bitcoin pool take (and, when fewer
 *   than 10 addresses are left, a background single-flight refill, a few at a time: the pool
 *   state, then the counter's compare-and-set with the batched insert in one statement), one
 *   derivation-counter upsert per EVM xpub (one index serves that key's options on different
 *   networks, src/payments/DepositSlots.ts), then
 *   invoice, options and outbox row in one statement; the answer is built from memory (the
 *   service does not re-read either);
 * - detail and status: the invoice with its options and payments in one select (InvoiceRepo.find);
 * - public status: that select alone, no authentication.
 *
 * Env: DATABASE_URL (a PostgreSQL server; pool of 10 like the service) or BENCH_DATA_DIR (an
 * embedded PGlite data directory, served over loopback in this process; pool of 1 like the
 * service), PORT, BENCH_API_RATE_LIMIT. Prints {"port": n} once it listens.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { createHash, randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { DECIMALS, DEFAULT_CONFIRMATIONS, DEFAULT_TOKENS, EVM_CHAIN_IDS } from "../../src/payments/Networks.ts"
import { INVOICE_READ_COLUMNS } from "../../src/invoices/InvoiceReadSql.ts"
import { encodeInvoiceRow, INVOICE_ROW_COLUMNS, OPTION_ROW_COLUMNS } from "../../src/invoices/InvoiceRows.ts"
import { Invoice, Payment } from "../../src/domain/Invoice.ts"
import { InvoiceId, MerchantId } from "../../src/domain/Ids.ts"
import { INVOICE_MERCHANT_FIELDS, INVOICE_SHOWN_FIELDS, OPTION_SHOWN_FIELDS, PAYMENT_SHOWN_FIELDS, STATUS_SHOWN_FIELDS } from "../../src/domain/InvoiceViews.ts"
import { Micros } from "../../src/domain/Money.ts"
import { isDateSchema, isNullableDateSchema } from "../../src/domain/Timestamps.ts"
import { depositSlots } from "../../src/payments/DepositSlots.ts"
import { qrSvg } from "../../src/payments/QrCode.ts"
import { bitcoinAddress, evmDepositAddress, solanaReference } from "../../src/payments/Derivation.ts"
import { checksumAddress } from "../../src/payments/EvmAddress.ts"
import { CANONICAL_FACTORY, forwarderAddress } from "../../src/payments/Forwarders.ts"

const RATE_LIMIT = Number(process.env.BENCH_API_RATE_LIMIT ?? "1000000")
const GAP_LIMIT = 20
const REFILLS_AT_ONCE = 2 // as src/payments/BitcoinAddressPool.ts
const BTC_USD_MICROS = 65_000_000_000n

let databaseUrl = process.env.DATABASE_URL
let poolSize = 10
let embedded: { readonly db: PGlite; readonly socket: PGLiteSocketServer } | undefined
if (databaseUrl === undefined || databaseUrl === "") {
  const dataDir = process.env.BENCH_DATA_DIR
  if (dataDir === undefined) throw new Error("set DATABASE_URL or BENCH_DATA_DIR")
  const db = await PGlite.create(dataDir)
  const socket = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 2 })
  await socket.start()
  embedded = { db, socket }
  databaseUrl = `postgres://postgres@${socket.getServerConn()}/postgres`
  poolSize = 1
}
// Connections stay open (no idle timeout): a PGlite behind the socket is one session for every
// connection, so a reconnect would find this process's named statements already prepared.
const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, idleTimeoutMillis: 0 })
// Exact amounts stay text (numeric, bigint), as in the service's decoders.
const noParse = (value: string) => value
pg.types.setTypeParser(pg.types.builtins.INT8, noParse)
pg.types.setTypeParser(pg.types.builtins.NUMERIC, noParse)

// ---- the statements (texts mirror the service's; named, so pg prepares each once per connection)

const Q = {
  // the key lookup and the rate-limit window in one statement (as ApiKeyAdmission on the database store)
  admit: {
    name: "admit",
    text: `WITH owner AS (
        SELECT k.key_hash, k.merchant_id, m.status, m.billing_status
        FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL
      ), counted AS (
        INSERT INTO rate_limits AS r (key, count, expires_at_ms, last_exceeded)
        SELECT 'api:'::text || owner.merchant_id::text, $2::double precision, $3::bigint, false
        FROM owner WHERE owner.status = 'active'
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN r.expires_at_ms <= $4 THEN $2::double precision
            WHEN $5::double precision IS NOT NULL AND r.count + $2 > $5::double precision THEN r.count
            ELSE r.count + $2 END,
          expires_at_ms = CASE WHEN r.expires_at_ms <= $4 THEN $3::bigint
            WHEN $5::double precision IS NOT NULL AND r.count + $2 > $5::double precision THEN r.expires_at_ms
            ELSE r.expires_at_ms + $6 END,
          last_exceeded = r.expires_at_ms > $4 AND $5::double precision IS NOT NULL
            AND r.count + $2 > $5::double precision
        RETURNING count, expires_at_ms, last_exceeded
      )
      SELECT owner.key_hash, owner.merchant_id, owner.status, owner.billing_status,
        counted.count, counted.expires_at_ms, counted.last_exceeded
      FROM owner LEFT JOIN counted ON true`
  },
  settings: {
    name: "settings",
    text: `SELECT s.*, COALESCE((SELECT json_agg(json_build_object(
        'id', m.id, 'network', m.network, 'assetCode', m.asset_code, 'railType', m.rail_type, 'enabled', m.enabled,
        'isDefault', m.is_default, 'position', m.position, 'recipientAddress', m.recipient_address, 'xpub', m.xpub)
        ORDER BY m.position, m.id) FROM payment_methods m WHERE m.merchant_id = s.merchant_id), '[]'::json) AS methods_json
      FROM checkout_settings s WHERE s.merchant_id = $1`
  },
  take: {
    name: "take",
    text: `WITH taken AS (
        UPDATE bitcoin_address_pool SET assigned_at = now()
        WHERE (xpub, derivation_index) = (
          SELECT xpub, derivation_index FROM bitcoin_address_pool
          WHERE xpub = $1 AND assigned_at IS NULL
          ORDER BY derivation_index LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING address, derivation_index)
      SELECT address, derivation_index,
        (SELECT count(*)::int FROM bitcoin_address_pool WHERE xpub = $1 AND assigned_at IS NULL) - 1 AS remaining
      FROM taken`
  },
  counter: {
    name: "counter",
    text: `INSERT INTO derivation_counters (xpub, next_index) VALUES ($1, $2)
      ON CONFLICT (xpub) DO UPDATE SET next_index = derivation_counters.next_index + $2 RETURNING next_index`
  },
  poolState: {
    name: "poolState",
    text: `SELECT (SELECT count(*)::int FROM bitcoin_address_pool WHERE xpub = $1 AND assigned_at IS NULL) AS free,
      COALESCE((SELECT next_index FROM derivation_counters WHERE xpub = $2), 0)::int AS next_index`
  }
}

// The service's row schemas name the columns (src/invoices/InvoiceRows.ts); the values are built here without them.
const INVOICE_COLUMNS = INVOICE_ROW_COLUMNS.map(({ column }) => column)
/**
 * The row of a new invoice as the model makes it (its lifecycle fields at their initial values),
 * encoded once at start-up; a create fills in what it is given (the service encodes per create).
 */
const NEW_INVOICE_ROW: Record<string, unknown> = encodeInvoiceRow(Invoice.make({
  id: InvoiceId.make(""),
  merchantId: MerchantId.make(""),
  amountMicros: Micros.make(0n),
  status: "awaiting_payment",
  timing: { mode: "immediate", expiresAfterMinutes: 60, payableUntilAt: new Date(0) },
  productName: null,
  issuedBy: null,
  billTo: null,
  redirectUrl: null,
  merchantReference: null,
  customerId: null,
  customerEmail: null,
  metadata: null,
  defaultPaymentOptionId: null,
  createdAt: new Date(0),
  livemode: true
}))
/** Which fields of the invoice and of a payment are timestamps (ISO text in the answers). */
const TIMESTAMPS = new Set(
  Object.entries({ ...Invoice.fields, ...Payment.fields }).filter(([, field]) => isDateSchema(field) || isNullableDateSchema(field)).map(([key]) => key)
)
const OPTION_INSERT = [...OPTION_ROW_COLUMNS, { column: "position", key: "position" }, { column: "reference", key: "reference" }, {
  column: "derivation_index",
  key: "derivationIndex"
}]
const OPTION_COLUMNS = OPTION_INSERT.map(({ column }) => column)
const placeholders = (rows: number, columns: number) =>
  Array.from({ length: rows }, (_, row) => `(${Array.from({ length: columns }, (_, column) => `$${row * columns + column + 1}`).join(", ")})`)
    .join(", ")
/** Invoice, options and outbox row in one statement, as InvoiceRepo.insert. */
const insertCreated = (optionCount: number) => {
  const invoiceParams = INVOICE_COLUMNS.length
  const optionParams = optionCount * OPTION_COLUMNS.length
  const shift = (text: string, by: number) => text.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + by}`)
  return {
    name: `insertCreated${optionCount}`,
    text: `WITH invoice AS (INSERT INTO invoices (${INVOICE_COLUMNS.join(", ")}) VALUES ${placeholders(1, invoiceParams)}), ` +
      `options AS (INSERT INTO payment_options (${OPTION_COLUMNS.join(", ")}) VALUES ` +
      `${shift(placeholders(optionCount, OPTION_COLUMNS.length), invoiceParams)}) ` +
      `INSERT INTO outbox (invoice_id, merchant_id, event) VALUES ${shift("($1, $2, $3)", invoiceParams + optionParams)}`
  }
}
const storeDerived = (count: number) => ({
  name: `storeDerived${count}`,
  text: `WITH reserved AS (
    INSERT INTO derivation_counters (xpub, next_index) VALUES ($1, $2)
    ON CONFLICT (xpub) DO UPDATE SET next_index = EXCLUDED.next_index
    WHERE derivation_counters.next_index = $3
    RETURNING next_index)
  INSERT INTO bitcoin_address_pool (xpub, derivation_index, address)
  SELECT $4, derived.derivation_index, derived.address
  FROM (VALUES ${Array.from({ length: count }, (_, row) => `($${5 + row * 2}::bigint, $${6 + row * 2}::text)`).join(", ")}) AS derived (derivation_index, address)
  WHERE EXISTS (SELECT 1 FROM reserved)
  RETURNING derivation_index::int AS derivation_index`
})

const find = {
  name: "find",
  text: `SELECT ${INVOICE_READ_COLUMNS} FROM invoices i WHERE i.id = $1`
}

// ---- small helpers (plain code, no validation library)

type Row = Record<string, any>

const formatAtomic = (atomic: bigint, decimals: number) => {
  const text = atomic.toString().padStart(decimals + 1, "0")
  const whole = text.slice(0, text.length - decimals)
  const fraction = text.slice(text.length - decimals).replace(/0+$/, "")
  return fraction === "" ? whole : `${whole}.${fraction}`
}
const micros = (value: unknown) => Number(BigInt(String(value))) / 1e6
const iso = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string).toISOString())

const send = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers }).end(text)
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

class HttpError extends Error {
  readonly status: number
  readonly headers: Record<string, string>
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.status = status
    this.headers = headers
  }
}

// ---- authentication: the key lookup and the rate limit in one statement (as ApiKeyAdmission)

const authenticate = async (request: IncomingMessage): Promise<string> => {
  const rawKey = request.headers["x-api-key"]
  if (typeof rawKey !== "string" || !/^svc_live_[A-Za-z0-9_-]{43}$/.test(rawKey)) throw new HttpError(401, "Invalid API key")
  const hash = createHash("sha256").update(rawKey).digest("hex")
  const now = Date.now()
  const extension = Math.max(1, Math.ceil(60_000 / RATE_LIMIT))
  const row = (await pool.query({ ...Q.admit, values: [hash, 1, now + extension, now, RATE_LIMIT, extension] })).rows[0]
  if (row === undefined || row.key_hash !== hash) throw new HttpError(401, "Invalid API key")
  if (row.status !== "active") throw new HttpError(403, "Forbidden")
  if (row.last_exceeded === true) {
    const retry = Math.max(1, Math.ceil((Number(row.expires_at_ms) - now) / 1000))
    throw new HttpError(429, `Rate limit exceeded. Retry after ${retry} seconds.`, { "retry-after": String(retry) })
  }
  return String(row.merchant_id)
}

// ---- the bitcoin address pool (as BitcoinAddressPool: take, and a single-flight refill)

const refilling = new Set<string>()
// Refills take turns (REFILLS_AT_ONCE at a time), outside any transaction: the pool state, then
// the compare-and-set store.
const waitingRefills: Array<() => Promise<void>> = []
let refillsRunning = 0
const nextRefill = () => {
  const next = refillsRunning < REFILLS_AT_ONCE ? waitingRefills.shift() : undefined
  if (next === undefined) return
  refillsRunning++
  void next().finally(() => {
    refillsRunning--
    nextRefill()
  })
}
const refill = (xpub: string) => {
  if (refilling.has(xpub)) return
  refilling.add(xpub)
  waitingRefills.push(async () => {
    try {
      const state = (await pool.query({ ...Q.poolState, values: [xpub, xpub] })).rows[0]
      const missing = GAP_LIMIT - Number(state.free)
      if (missing <= 0) return
      const first = Number(state.next_index)
      const derived = Array.from({ length: missing }, (_, offset) => [first + offset, bitcoinAddress(xpub, first + offset)])
      await pool.query({ ...storeDerived(missing), values: [xpub, first + missing, first, xpub, ...derived.flat()] })
    } catch (error) {
      console.error("refill failed", error)
    } finally {
      refilling.delete(xpub)
    }
  })
  nextRefill()
}

// ---- the use cases

interface Method {
  readonly id: string
  readonly network: "bitcoin" | "ethereum" | "arbitrum" | "base" | "solana"
  readonly assetCode: "BTC" | "USDC" | "USDT"
  readonly railType: "wallet_contract" | "address_transfer"
  readonly enabled: boolean
  readonly isDefault: boolean
  readonly recipientAddress: string | null
  readonly xpub: string | null
}

const isEvm = (network: string) => network === "ethereum" || network === "arbitrum" || network === "base"

const create = async (merchantId: string, body: string) => {
  let input: { amountUsd?: unknown; issuedBy?: unknown }
  try {
    input = JSON.parse(body)
  } catch {
    throw new HttpError(400, "Request body must be JSON")
  }
  const amountUsd = input.amountUsd
  if (typeof amountUsd !== "number" || !Number.isFinite(amountUsd) || amountUsd < 0.01) throw new HttpError(400, "amountUsd must be at least 0.01")
  const cents = Math.round(amountUsd * 100)
  if (Math.abs(cents - amountUsd * 100) > 1e-6) throw new HttpError(400, "amountUsd must have at most 2 decimal places")
  const amountMicros = BigInt(cents) * 10_000n

  const settings = (await pool.query({ ...Q.settings, values: [merchantId] })).rows[0]
  if (settings === undefined) throw new HttpError(404, "Checkout configuration not found")
  let methods = (settings.methods_json as Array<Method>).filter((method) => method.enabled)

  const bitcoinIndexes = new Map<string, { index: number; address: string }>()
  for (const method of methods.filter((candidate) => candidate.network === "bitcoin" && candidate.xpub !== null)) {
    const taken = (await pool.query({ ...Q.take, values: [method.xpub] })).rows[0]
    if (taken === undefined || Number(taken.remaining) < GAP_LIMIT / 2) refill(method.xpub!)
    if (taken !== undefined) bitcoinIndexes.set(method.id, { index: Number(taken.derivation_index), address: String(taken.address) })
  }
  methods = methods.filter((method) => method.network !== "bitcoin" || bitcoinIndexes.has(method.id))
  if (methods.length === 0) throw new HttpError(503, "Bitcoin addresses are being prepared")

  // One counter upsert per extended key; options of one key on different networks share an index.
  const slots = depositSlots(methods.filter((method) => isEvm(method.network) && method.railType === "address_transfer" && method.xpub !== null)
    .map((method) => ({ id: method.id, xpub: method.xpub!, network: method.network })))
  const indexes = new Map<string, number>()
  for (const [xpub, count] of slots.counts) {
    const next = Number((await pool.query({ ...Q.counter, values: [xpub, count] })).rows[0].next_index)
    for (const method of methods) if (method.xpub === xpub && slots.offsets.has(method.id)) indexes.set(method.id, next - count + slots.offsets.get(method.id)!)
  }

  const invoiceId = randomUUID()
  const createdAt = new Date()
  const payableUntilAt = new Date(createdAt.getTime() + Number(settings.expires_after_minutes ?? 60) * 60_000)
  const defaultMethod = methods.find((method) => method.isDefault) ?? methods[0]
  const issuedBy = typeof input.issuedBy === "string" ? input.issuedBy : settings.issued_by
  const label = issuedBy ?? "Checkout"
  // An EVM deposit address shared by options on several networks (same key and index) is derived once, as the service does.
  const derived = new Map<string, string>()
  const options = await Promise.all(methods.map(async (method, position) => {
    const decimals = DECIMALS[method.assetCode]
    const rate = method.assetCode === "BTC" ? BTC_USD_MICROS : 1_000_000n
    const quotedAtomic = (amountMicros * 10n ** BigInt(decimals) + rate - 1n) / rate
    const tokenContract = method.assetCode === "BTC" ? null : DEFAULT_TOKENS[`${method.network}:${method.assetCode}`] ?? null
    const requiredConfirmations = DEFAULT_CONFIRMATIONS[method.network]
    const optionId = randomUUID()
    let destination: string | null = null
    let uri: string | null = null
    let reference: string | null = null
    let derivationIndex: number | null = null
    let payload: Record<string, unknown> = { railType: method.railType, requiredConfirmations }
    if (method.network === "bitcoin") {
      const taken = bitcoinIndexes.get(method.id)!
      destination = taken.address
      derivationIndex = taken.index
      uri = `bitcoin:${destination}?amount=${formatAtomic(quotedAtomic, decimals)}`
    } else if (method.network === "solana") {
      reference = solanaReference()
      destination = method.recipientAddress
      const memo = `checkout:${invoiceId}:${optionId}`
      uri = `solana:${destination}?amount=${formatAtomic(quotedAtomic, decimals)}&spl-token=${tokenContract}&reference=${reference}` +
        `&label=${encodeURIComponent(label)}&memo=${encodeURIComponent(memo)}`
      payload = { ...payload, methodType: "solana", paymentUri: uri, recipientAddress: destination, reference, mintAddress: tokenContract, decimals,
        amountAtomic: quotedAtomic.toString(), memo }
    } else if (method.railType === "wallet_contract") {
      payload = { ...payload, chainId: EVM_CHAIN_IDS[method.network as "ethereum"],
        contractAddress: forwarderAddress(CANONICAL_FACTORY, optionId, checksumAddress(method.recipientAddress!)), tokenContract, recipient: method.recipientAddress, decimals,
        paymentAmountAtomic: quotedAtomic.toString() }
    } else {
      derivationIndex = indexes.get(method.id) ?? null
      const key = `${method.xpub}/${derivationIndex}`
      destination = derived.get(key) ?? evmDepositAddress(method.xpub!, derivationIndex!)
      derived.set(key, destination)
      uri = `ethereum:${tokenContract}@${EVM_CHAIN_IDS[method.network as "ethereum"]}/transfer?address=${destination}&uint256=${quotedAtomic}`
      payload = { ...payload, chainId: EVM_CHAIN_IDS[method.network as "ethereum"], tokenContract, recipient: destination, decimals, paymentAmountAtomic: quotedAtomic.toString() }
    }
    return {
      id: optionId,
      invoiceId,
      position,
      railType: method.railType,
      assetCode: method.assetCode,
      network: method.network,
      tokenContract,
      decimals,
      quotedAtomic,
      quoteRate: method.assetCode === "BTC" ? "65000" : "1",
      destinationAddress: destination,
      paymentUri: uri,
      qrCode: uri === null ? null : qrSvg(uri),
      status: "active",
      isDefault: method === defaultMethod,
      optionPayload: payload,
      requiredConfirmations,
      reference,
      derivationIndex
    }
  }))
  const invoice: Record<string, unknown> = {
    ...NEW_INVOICE_ROW,
    id: invoiceId,
    merchantId,
    amountMicros: amountMicros.toString(),
    expiresAfterMinutes: settings.expires_after_minutes ?? 60,
    payableUntilAt,
    issuedBy,
    defaultPaymentOptionId: options.find((option) => option.isDefault)?.id ?? null,
    createdAt
  }
  const optionValues = options.flatMap((option) =>
    OPTION_INSERT.map(({ key }) => {
      const value = (option as Record<string, unknown>)[key]
      return typeof value === "bigint" ? value.toString() : key === "optionPayload" ? JSON.stringify(value) : value
    })
  )

  await pool.query({
    ...insertCreated(options.length),
    values: [...INVOICE_ROW_COLUMNS.map(({ key }) => invoice[key]), ...optionValues, invoiceId, merchantId, "invoice_created"]
  })
  return {
    id: invoiceId,
    amountUsd: micros(amountMicros),
    status: "awaiting_payment",
    paymentCoverage: "none",
    receivedAmountUsd: 0,
    confirmedAmountUsd: 0,
    confirmations: 0,
    issuedBy,
    paymentTiming: { mode: "immediate", expiresAfterMinutes: invoice.expires_after_minutes, payableUntilAt: payableUntilAt.toISOString() },
    paymentOptions: options.map((option) => optionView(option, option.quotedAtomic)),
    defaultPaymentOptionId: invoice.default_payment_option_id,
    createdAt: createdAt.toISOString()
  }
}

/** The fields of `row` named in `keys`, timestamps as ISO text: the service's views pick the same lists (src/domain/InvoiceViews.ts). */
const shown = (row: Row, keys: ReadonlyArray<string>): Row => {
  const out: Row = {}
  for (const key of keys) out[key] = TIMESTAMPS.has(key) ? iso(row[key]) : row[key]
  return out
}

/** A payment option as every invoice view shows it (the quoted amount as given: bigint when built, text when read). */
const optionView = (option: Row, quotedAtomic: bigint) => ({
  ...shown(option, OPTION_SHOWN_FIELDS),
  quotedAmount: Number(formatAtomic(quotedAtomic, option.decimals)),
  quoteRate: Number(option.quoteRate),
  status: option.status
})

const findInvoice = async (id: string): Promise<Row | undefined> => (await pool.query({ ...find, values: [id] })).rows[0]

/** The read views: the invoice, its options and payments (status: the polling subset). */
const invoiceView = (row: Row, full: boolean) => {
  const amount = micros(row.amountMicros)
  const received = micros(row.receivedMicros)
  const confirmed = micros(row.confirmedMicros)
  const summary = {
    paymentCoverage: received === 0 ? "none" : received < amount ? "partial" : received === amount ? "exact" : "over",
    receivedAmountUsd: received,
    confirmedAmountUsd: confirmed,
    remainingAmountUsd: Math.max(0, amount - received),
    overpaymentAmountUsd: Math.max(0, received - amount)
  }
  const parts = {
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: received,
    confirmedAmountUsd: confirmed,
    paymentTiming: { mode: row.timingMode, expiresAfterMinutes: row.expiresAfterMinutes, payableUntilAt: iso(row.payableUntilAt) },
    paymentSummary: summary,
    paymentOptions: (row.optionsJson as Array<Row>).map((option) => optionView(option, BigInt(option.quotedAtomic))),
    payments: (row.paymentsJson as Array<Row>).map((payment) => ({
      ...shown(payment, PAYMENT_SHOWN_FIELDS),
      amountReceived: Number(formatAtomic(BigInt(payment.amountAtomic), payment.decimals)),
      observedTotalAmount: Number(formatAtomic(BigInt(payment.observedTotalAtomic), payment.decimals))
    }))
  }
  return full
    ? { ...shown(row, INVOICE_SHOWN_FIELDS), ...shown(row, INVOICE_MERCHANT_FIELDS), amountUsd: amount, ...parts }
    : { ...shown(row, STATUS_SHOWN_FIELDS), ...parts }
}

const UUID = "([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
const PUBLIC_STATUS = new RegExp(`^/api/checkout/pay/${UUID}/status$`)
const MERCHANT_INVOICE = new RegExp(`^/api/checkout/invoices/${UUID}(/status)?$`)

const server = createServer(async (request, response) => {
  try {
    const url = request.url ?? "/"
    const publicStatus = PUBLIC_STATUS.exec(url)
    if (request.method === "GET" && publicStatus !== null) {
      const row = await findInvoice(publicStatus[1])
      return row === undefined ? send(response, 404, { error: "Invoice not found" }) : send(response, 200, invoiceView(row, false))
    }
    if (request.method === "POST" && url === "/api/checkout/invoices") {
      const merchantId = await authenticate(request)
      return send(response, 201, await create(merchantId, await readBody(request)))
    }
    const merchantInvoice = MERCHANT_INVOICE.exec(url)
    if (request.method === "GET" && merchantInvoice !== null) {
      const merchantId = await authenticate(request)
      const row = await findInvoice(merchantInvoice[1])
      if (row === undefined || row.merchantId !== merchantId) return send(response, 404, { error: "Invoice not found" })
      return send(response, 200, invoiceView(row, merchantInvoice[2] === undefined))
    }
    send(response, 404, { error: "Not found" })
  } catch (error) {
    if (error instanceof HttpError) return send(response, error.status, { error: error.message }, error.headers)
    console.error(error)
    send(response, 500, { error: "Internal server error" })
  }
})

const port = Number(process.env.PORT ?? "0")
server.listen(port, "127.0.0.1", () => {
  const address = server.address()
  console.log(JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : port }))
})

const shutdown = async () => {
  server.close()
  await pool.end().catch(() => undefined)
  if (embedded !== undefined) {
    await embedded.socket.stop().catch(() => undefined)
    await embedded.db.close().catch(() => undefined)
  }
  process.exit(0)
}
process.on("SIGTERM", () => void shutdown())
process.on("SIGINT", () => void shutdown())
