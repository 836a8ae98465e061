/**
 * The raw baseline: node:http + pg doing the service's SQL work per request (key lookup, rate-limit
 * upsert, settings, address pool and derivation counter, one transaction of inserts; one-query
 * reads), without Effect and without QR codes. Prints {port, apiKey, invoiceId} once it serves.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { createHash, randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Effect, Layer } from "effect"
import pg from "pg"
import { ServicesLive } from "../../src/App.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { seedMerchant } from "./seed.ts"

let databaseUrl = process.env.DATABASE_URL
let poolSize = 10
if (databaseUrl === undefined) {
  // Embedded: this process owns its own PGlite, served on loopback like the service's.
  const db = await PGlite.create("memory://")
  const socket = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 4 })
  await socket.start()
  databaseUrl = `postgres://postgres@${socket.getServerConn()}/postgres`
  poolSize = 1
}

const config = { ...parseConfig({ CHECKOUT_ENV: "test", DATABASE_URL: databaseUrl }), role: "api" as const }
const seeded = await Effect.runPromise(
  Effect.scoped(Effect.provide(seedMerchant, Layer.provideMerge(ServicesLive(), Layer.succeed(AppConfig, config))))
)

const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize })

const OPTIONS_JSON = `COALESCE((SELECT json_agg(json_build_object('id', o.id, 'railType', o.rail_type, 'assetCode', o.asset_code,
  'network', o.network, 'tokenContract', o.token_contract, 'quotedAtomic', o.quoted_atomic::text, 'quoteRate', o.quote_rate,
  'destinationAddress', o.destination_address, 'paymentUri', o.payment_uri, 'qrCode', o.qr_code, 'status', o.status,
  'isDefault', o.is_default, 'optionPayload', o.option_payload) ORDER BY o.position)
  FROM payment_options o WHERE o.invoice_id = i.id), '[]'::json)`
const PAYMENTS_JSON = `COALESCE((SELECT json_agg(json_build_object('id', p.id, 'transactionHash', p.transaction_hash,
  'amountAtomic', p.amount_atomic::text, 'confirmations', p.confirmations) ORDER BY p.observed_at, p.id)
  FROM payments p WHERE p.invoice_id = i.id), '[]'::json)`

const q = {
  key: { name: "key", text: `SELECT k.key_hash, m.id AS merchant_id, m.status, m.billing_status FROM api_keys k
    JOIN merchants m ON m.id = k.merchant_id WHERE k.key_hash = $1 AND k.revoked_at IS NULL` },
  rate: { name: "rate", text: `INSERT INTO rate_limits AS r (key, count, expires_at_ms, last_exceeded) VALUES ($1, 1, $2::bigint + 600, false)
    ON CONFLICT (key) DO UPDATE SET count = CASE WHEN r.expires_at_ms <= $2::bigint THEN 1 ELSE r.count + 1 END,
    expires_at_ms = CASE WHEN r.expires_at_ms <= $2::bigint THEN $2::bigint + 600 ELSE r.expires_at_ms + 600 END, last_exceeded = false
    RETURNING count, expires_at_ms, last_exceeded` },
  settings: { name: "settings", text: `SELECT s.*, COALESCE((SELECT json_agg(json_build_object('id', m.id, 'network', m.network,
    'assetCode', m.asset_code, 'railType', m.rail_type, 'enabled', m.enabled, 'isDefault', m.is_default, 'xpub', m.xpub,
    'recipientAddress', m.recipient_address) ORDER BY m.position, m.id) FROM payment_methods m WHERE m.merchant_id = s.merchant_id), '[]'::json)
    AS methods_json FROM checkout_settings s WHERE s.merchant_id = $1` },
  take: { name: "take", text: `WITH taken AS (UPDATE bitcoin_address_pool SET assigned_at = now()
    WHERE (xpub, derivation_index) = (SELECT xpub, derivation_index FROM bitcoin_address_pool WHERE xpub = $1 AND assigned_at IS NULL
    ORDER BY derivation_index LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING address, derivation_index)
    SELECT address, derivation_index, (SELECT count(*)::int FROM bitcoin_address_pool WHERE xpub = $1 AND assigned_at IS NULL) - 1 AS remaining FROM taken` },
  refillCount: { name: "refillCount", text: `INSERT INTO derivation_counters (xpub, next_index) VALUES ($1, $2)
    ON CONFLICT (xpub) DO UPDATE SET next_index = derivation_counters.next_index + $2 RETURNING next_index` },
  find: { name: "find", text: `SELECT i.*, ${OPTIONS_JSON} AS options_json, ${PAYMENTS_JSON} AS payments_json FROM invoices i WHERE i.id = $1` }
}

const json = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text)
}

const authenticate = async (request: IncomingMessage) => {
  const key = request.headers["x-api-key"]
  if (typeof key !== "string") return undefined
  const { rows } = await pool.query({ ...q.key, values: [createHash("sha256").update(key).digest("hex")] })
  if (rows[0] === undefined || rows[0].status !== "active") return undefined
  await pool.query({ ...q.rate, values: [`api:${rows[0].merchant_id}`, Date.now()] })
  return String(rows[0].merchant_id)
}

const view = (row: Record<string, unknown>) => ({
  id: row.id,
  amountUsd: Number(row.amount_micros) / 1e6,
  status: row.status,
  paymentTiming: { mode: row.timing_mode, payableUntilAt: row.payable_until_at },
  paymentOptions: row.options_json,
  payments: row.payments_json,
  createdAt: row.created_at
})

const create = async (merchantId: string, body: { amountUsd: number }) => {
  const amountMicros = BigInt(Math.round(body.amountUsd * 100)) * 10_000n
  const settings = (await pool.query({ ...q.settings, values: [merchantId] })).rows[0]
  const methods = (settings.methods_json as Array<Record<string, unknown>>).filter((method) => method.enabled)
  const invoiceId = randomUUID()
  const options: Array<Array<unknown>> = []
  for (const [position, method] of methods.entries()) {
    let destination: unknown = null
    let index: unknown = null
    if (method.network === "bitcoin") {
      const taken = (await pool.query({ ...q.take, values: [method.xpub] })).rows[0]
      destination = taken?.address ?? null
      index = taken?.derivation_index ?? null
    } else if (method.railType === "address_transfer" && method.xpub !== null) {
      index = Number((await pool.query({ ...q.refillCount, values: [method.xpub, 1] })).rows[0].next_index) - 1
      destination = `0x${createHash("sha256").update(`${method.xpub}/${index}`).digest("hex").slice(0, 40)}`
    }
    const atomic = method.assetCode === "BTC" ? (amountMicros * 100_000_000n + 64_999_999_999n) / 65_000_000_000n : amountMicros
    options.push([randomUUID(), invoiceId, position, method.railType, method.assetCode, method.network, null, method.assetCode === "BTC" ? 8 : 6,
      atomic.toString(), method.assetCode === "BTC" ? "65000" : "1", destination, null, null, "active", position === 0,
      JSON.stringify({ railType: method.railType }), 12, method.network === "solana" ? randomUUID() : null, index])
  }
  const now = new Date()
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    await client.query({
      name: "insertInvoice",
      text: `INSERT INTO invoices (id, merchant_id, amount_micros, status, timing_mode, expires_after_minutes, payable_until_at, issued_by, created_at)
        VALUES ($1, $2, $3, 'awaiting_payment', 'immediate', 60, $4, $5, $6)`,
      values: [invoiceId, merchantId, amountMicros.toString(), new Date(now.getTime() + 3_600_000), settings.issued_by, now]
    })
    const placeholders = options.map((_, row) => `(${Array.from({ length: 19 }, (_, column) => `$${row * 19 + column + 1}`).join(", ")})`).join(", ")
    await client.query(`INSERT INTO payment_options (id, invoice_id, position, rail_type, asset_code, network, token_contract, decimals,
      quoted_atomic, quote_rate, destination_address, payment_uri, qr_code, status, is_default, option_payload, required_confirmations,
      reference, derivation_index) VALUES ${placeholders}`, options.flat())
    await client.query({ name: "outbox", text: "INSERT INTO outbox (invoice_id, merchant_id, event) VALUES ($1, $2, 'invoice_created')", values: [invoiceId, merchantId] })
    await client.query("COMMIT")
  } catch (error) {
    await client.query("ROLLBACK")
    throw error
  } finally {
    client.release()
  }
  return (await pool.query({ ...q.find, values: [invoiceId] })).rows[0]
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = ""
    request.on("data", (chunk: Buffer) => (text += chunk))
    request.on("end", () => resolve(text))
  })

const server = createServer(async (request, response) => {
  try {
    const url = request.url ?? "/"
    const publicStatus = /^\/api\/checkout\/pay\/([0-9a-f-]{36})\/status$/.exec(url)
    if (publicStatus !== null) {
      const row = (await pool.query({ ...q.find, values: [publicStatus[1]] })).rows[0]
      return row === undefined ? json(response, 404, { error: "Invoice not found" }) : json(response, 200, view(row))
    }
    const merchantId = await authenticate(request)
    if (merchantId === undefined) return json(response, 401, { error: "Invalid API key" })
    if (request.method === "POST" && url === "/api/checkout/invoices") {
      return json(response, 201, view(await create(merchantId, JSON.parse(await readBody(request)))))
    }
    const detail = /^\/api\/checkout\/invoices\/([0-9a-f-]{36})(\/status)?$/.exec(url)
    if (detail !== null) {
      const row = (await pool.query({ ...q.find, values: [detail[1]] })).rows[0]
      return row === undefined || row.merchant_id !== merchantId ? json(response, 404, { error: "Invoice not found" }) : json(response, 200, view(row))
    }
    json(response, 404, { error: "Not found" })
  } catch (error) {
    json(response, 500, { error: String(error) })
  }
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  console.log(JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : 0, ...seeded }))
})
process.on("SIGTERM", () => process.exit(0))
