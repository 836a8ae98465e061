import { afterAll, describe, expect, it } from "vitest"
import { type ScriptProcess, scriptEnv, startScript } from "../support/ScriptProcess.ts"

let service: ScriptProcess | undefined
afterAll(async () => {
  await service?.stop()
})

describe("PORT=0: the system picks the port, and every address the service gives out carries it", () => {
  it("the start banner's links, its curl and the created invoice's paymentUrl name the bound port, not :0", { timeout: 120_000 }, async () => {
    service = startScript("src/main.ts", [], scriptEnv({ PORT: "0", CHECKOUT_DATA_DIR: "memory://", CHECKOUT_DEMO: "true" }))
    const listening = await service.line(/Checkout service listening on http:\/\/127\.0\.0\.1:\d+/)
    const port = /127\.0\.0\.1:(\d+)/.exec(listening)![1]!
    const base = `http://127.0.0.1:${port}`
    expect(Number(port)).toBeGreaterThan(0)
    expect(listening).toContain(`public URL ${base}`)
    expect(await service.line(/^API docs: /)).toContain(`${base}/docs`)
    const curl = await service.line(/curl -s -X POST/)
    expect(curl).toContain(`${base}/api/checkout/invoices`)

    const apiKey = /X-Api-Key: ([^']+)'/.exec(curl)![1]!
    const created = await fetch(`${base}/api/checkout/invoices`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify({ amountUsd: 25.5, productName: "T-shirt" })
    })
    const invoice = await created.json() as { id: string; paymentUrl: string }
    expect(created.status).toBe(201)
    expect(invoice.paymentUrl).toBe(`${base}/pay/${invoice.id}`)
    expect((await fetch(invoice.paymentUrl)).status).toBe(200)
    const openapi = await (await fetch(`${base}/api/openapi.json`)).json() as { servers: ReadonlyArray<{ url: string }> }
    expect(openapi.servers[0]!.url).toBe(base)
  })
})
