/**
 * What a login flood does to everyone else: public status paced at a steady rate, alone and then
 * next to logins with random emails at 10/s (each one an scrypt at N=2^17 against the dummy hash).
 * The hash runs on the libuv pool with bounded concurrency, so the event loop keeps serving.
 *
 *   [DATABASE_URL=...] node --experimental-strip-types scripts/bench/login-flood.ts [statusRate] [seconds]
 */
import { join } from "node:path"
import { pacedLoad, type PacedRequest } from "./paced.ts"
import { benchServiceEnv, freePort, pacedRequestsFor, ROOT, type Seeded, startNode, stop, waitForHttp } from "./shared.ts"

const rate = Number(process.argv[2] ?? "200")
const seconds = Number(process.argv[3] ?? "8")
const env = { ...process.env }
const seed = (await startNode(join(import.meta.dirname, "setup.ts"), ["--label", "service", "--merchants", "1"], env, { label: "setup" }).firstJson) as unknown as Seeded
const port = await freePort()
const child = startNode(join(ROOT, "src", "main.ts"), [], benchServiceEnv(env, port, {
  CHECKOUT_LOGIN_ADDRESS_RATE_LIMIT: "1000000",
  CHECKOUT_PASSWORD_SCRYPT_LOG_N: "17"
}), { label: "service" })
const base = `http://127.0.0.1:${port}`
await waitForHttp(`${base}/api/checkout/pay/${seed.invoiceIds[0]}/status`, child)

const status = pacedRequestsFor("public status", seed)
const logins: Array<PacedRequest> = Array.from({ length: 200 }, () => ({
  method: "POST",
  path: "/api/auth/login",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email: `${crypto.randomUUID()}@flood.test`, password: "not the password" })
}))

await pacedLoad(base, status, { rate, seconds: 3, connections: 20 })
const alone = await pacedLoad(base, status, { rate, seconds, connections: 20 })
const [flooded, flood] = await Promise.all([
  pacedLoad(base, status, { rate, seconds, connections: 20 }),
  pacedLoad(base, logins, { rate: 10, seconds, connections: 20 })
])
console.log(`public status at ${rate}/s alone:            p50 ${alone.p50} ms, p99 ${alone.p99} ms`)
console.log(`public status at ${rate}/s + 10 logins/s:    p50 ${flooded.p50} ms, p99 ${flooded.p99} ms`)
console.log(`logins (N=2^17, 401 expected):              p50 ${flood.p50} ms, p99 ${flood.p99} ms, non-2xx ${flood.non2xx} of ${flood.sent}`)
await stop(child)
process.exit(0)
