import { buildConnector } from "undici"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Resolver } from "../../src/webhooks/Destination.ts"
import { sendWebhook, type WebhookRequest } from "../../src/webhooks/Sender.ts"
import { WebhookAgents } from "../../src/webhooks/WebhookAgents.ts"
import { recordingConnector, scriptedResolver, startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

let plain: WebhookReceiver
let secure: WebhookReceiver

beforeAll(async () => {
  plain = await startWebhookReceiver()
  secure = await startWebhookReceiver({ tls: true })
})
afterAll(async () => {
  await plain?.close()
  await secure?.close()
})

const noDns: Resolver = async (hostname) => {
  throw new Error(`unexpected lookup of ${hostname}`)
}

const send = (overrides: Partial<WebhookRequest> & Pick<WebhookRequest, "url">) =>
  sendWebhook({
    body: "{\"event\":\"invoice_created\"}",
    headers: { "content-type": "application/json" },
    resolve: noDns,
    connect: recordingConnector().connect,
    allowLoopback: true,
    ...overrides
  })

describe("the webhook sender", () => {
  it("connects only to the checked address and keeps the host name in Host and SNI, with the certificate verified", async () => {
    secure.on("/pinned", (response) => response.writeHead(200).end("ok"))
    const dns = scriptedResolver({ "hooks.merchant.test": [["127.0.0.1"]] })
    const network = recordingConnector()
    const result = await send({ url: secure.url("/pinned", "hooks.merchant.test"), resolve: dns.resolve, connect: network.connect })
    expect(result).toMatchObject({ ok: true, statusCode: 200, responseExcerpt: "ok", error: null })
    expect(network.dials).toEqual([{ hostname: "127.0.0.1", port: String(secure.port), servername: "hooks.merchant.test" }])
    const [request] = secure.received("/pinned")
    expect(request.headers.host).toBe(`hooks.merchant.test:${secure.port}`)
    expect(request.servername).toBe("hooks.merchant.test")
    expect(dns.lookups).toEqual(["hooks.merchant.test"])
  })

  it("keeps the connection to the address it has just checked, dials the new address when the name moves, and checks DNS every time", async () => {
    secure.on("/kept", (response) => response.writeHead(200).end("ok"))
    // Two public addresses of the merchant's host, both reached on loopback by the test network.
    const dns = scriptedResolver({ "hooks.merchant.test": [["93.184.216.34"], ["93.184.216.34"], ["93.184.216.35"], ["93.184.216.35"]] })
    const network = recordingConnector({ "93.184.216.34": "127.0.0.1", "93.184.216.35": "127.0.0.1" })
    const agents = new WebhookAgents(network.connect)
    try {
      const results = []
      for (let turn = 0; turn < 4; turn++) {
        results.push(await send({ url: secure.url("/kept", "hooks.merchant.test"), resolve: dns.resolve, connect: network.connect, agents, allowLoopback: false }))
        // undici hands the connection back to its pool just after the body ends
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(results.map((result) => result.statusCode)).toEqual([200, 200, 200, 200])
      expect(dns.lookups).toHaveLength(4)
      // One TLS connection per checked address, each with the host name as SNI.
      expect(network.dials).toEqual([
        { hostname: "93.184.216.34", port: String(secure.port), servername: "hooks.merchant.test" },
        { hostname: "93.184.216.35", port: String(secure.port), servername: "hooks.merchant.test" }
      ])
      expect(agents.size).toBe(2)
    } finally {
      await agents.close()
    }
  })

  it("opens and closes a connection of its own without shared agents", async () => {
    plain.on("/own", (response) => response.writeHead(200).end())
    const network = recordingConnector()
    for (let turn = 0; turn < 2; turn++) expect((await send({ url: plain.url("/own"), connect: network.connect })).ok).toBe(true)
    expect(network.dials).toHaveLength(2)
  })

  it("does not trust a certificate the system does not trust, even on a pinned address", async () => {
    const dns = scriptedResolver({ "hooks.merchant.test": [["127.0.0.1"]] })
    const result = await send({ url: secure.url("/pinned", "hooks.merchant.test"), resolve: dns.resolve, connect: buildConnector({ allowH2: false }) })
    expect(result.ok).toBe(false)
    expect(result.error).toMatch(/certificate/i)
  })

  it("refuses before connecting when any resolved address is forbidden", async () => {
    for (const answer of [["93.184.216.34", "10.0.0.7"], ["::ffff:169.254.169.254"], ["64:ff9b::a00:1"], ["fd00::1"], ["0.0.0.0"], ["::"]]) {
      const network = recordingConnector()
      const dns = scriptedResolver({ "hooks.merchant.test": [answer] })
      const result = await send({ url: "https://hooks.merchant.test/x", resolve: dns.resolve, connect: network.connect, allowLoopback: false })
      expect(result, answer.join()).toMatchObject({ ok: false, statusCode: null })
      expect(result.error).toMatch(/forbidden address/)
      expect(network.dials).toEqual([])
    }
  })

  it("does not follow a redirect: a 3xx fails the attempt", async () => {
    plain.on("/moved", (response) => response.writeHead(307, { location: "/elsewhere" }).end())
    const result = await send({ url: plain.url("/moved") })
    expect(result).toMatchObject({ ok: false, statusCode: 307, error: "redirects are not followed" })
    expect(plain.received("/elsewhere")).toHaveLength(0)
  })

  it("reads at most 1 KiB of the response", async () => {
    plain.on("/chatty", (response) => response.writeHead(500).end("x".repeat(1_000_000)))
    const result = await send({ url: plain.url("/chatty") })
    expect(result).toMatchObject({ ok: false, statusCode: 500, error: "HTTP 500" })
    expect(result.responseExcerpt).toHaveLength(1024)
  })

  it("holds one time budget over DNS, connect, headers and body", async () => {
    plain.on("/no-headers", () => undefined)
    plain.on("/slow-body", (response) => {
      response.writeHead(200, { "content-type": "text/plain" })
      response.write("partial")
    })
    const slowDns: Resolver = () => new Promise(() => undefined)
    for (const overrides of [
      { url: plain.url("/no-headers") },
      { url: plain.url("/slow-body") },
      { url: "https://slow-dns.merchant.test/x", resolve: slowDns }
    ]) {
      const started = performance.now()
      const result = await send({ ...overrides, timeoutMs: 300 })
      expect(result, overrides.url).toMatchObject({ ok: false, statusCode: null, error: "timed out after 300 ms" })
      expect(performance.now() - started).toBeLessThan(2_000)
    }
  })

  it("abandons the request when the caller aborts", async () => {
    plain.on("/abandoned", () => undefined)
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const result = await send({ url: plain.url("/abandoned"), signal: controller.signal })
    expect(result).toMatchObject({ ok: false, error: "attempt abandoned" })
  })
})
