import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { addressAllowed, checkDestination, type Resolver, urlProblem } from "../../src/webhooks/Destination.ts"
import { signWebhook, verifyWebhookSignature } from "../../src/webhooks/Signature.ts"

const FORBIDDEN = [
  "10.1.2.3", "172.16.0.1", "192.168.1.1", "127.0.0.1", "127.8.9.10", "169.254.169.254", "100.64.0.1", "224.0.0.1",
  "0.0.0.0", "255.255.255.255", "240.0.0.1", "192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.1",
  "::", "::1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "2001:db8::1",
  "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1", "64:ff9b::a00:1"
]

const fixed = (...addresses: Array<string>): Resolver => async () =>
  addresses.map((address) => ({ address, family: address.includes(":") ? 6 as const : 4 as const }))

describe("webhook destinations", () => {
  it("refuses every private, loopback, link-local, unique-local, CGNAT, multicast, unspecified, reserved and documentation address", () => {
    for (const address of FORBIDDEN) expect(addressAllowed(address, false), address).toBe(false)
    expect(addressAllowed("93.184.216.34", false)).toBe(true)
    expect(addressAllowed("2606:4700:4700::1111", false)).toBe(true)
  })

  it("refuses a host that resolves to any forbidden address", async () => {
    for (const address of FORBIDDEN) {
      const checked = await checkDestination("https://hooks.example.com/x", fixed("93.184.216.34", address), false)
      expect(checked.ok, address).toBe(false)
    }
  })

  it("refuses literal addresses in every notation", async () => {
    for (const url of [
      "https://127.0.0.1/", "https://2130706433/", "https://0177.0.0.1/", "https://0x7f.0.0.1/", "https://0x7f000001/",
      "https://0.0.0.0/", "https://[::]/", "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/",
      "https://10.0.0.1/", "https://0xa.0.0.1/", "https://[64:ff9b::7f00:1]/"
    ]) {
      const checked = await checkDestination(url, fixed("93.184.216.34"), false)
      expect(checked.ok, url).toBe(false)
    }
  })

  it("refuses credentials, fragments and plain HTTP outside loopback development", () => {
    expect(urlProblem("https://user:pass@hooks.example.com/", false)).toBe("url must not contain credentials")
    expect(urlProblem("https://user@hooks.example.com/", false)).toBe("url must not contain credentials")
    expect(urlProblem("https://hooks.example.com/#frag", false)).toBe("url must not contain a fragment")
    expect(urlProblem("http://hooks.example.com/", true)).toMatch(/https/)
    expect(urlProblem("http://127.0.0.1:8080/hook", false)).toMatch(/https/)
    expect(urlProblem("http://127.0.0.1:8080/hook", true)).toBeUndefined()
    expect(urlProblem("ftp://hooks.example.com/", false)).toMatch(/https/)
    expect(urlProblem("https://hooks.example.com/path?x=1", false)).toBeUndefined()
  })

  it("checks DNS on every attempt: a rebinding to 127.0.0.1 on the retry is refused", async () => {
    let calls = 0
    const rebinding: Resolver = async () => (calls++ === 0 ? [{ address: "93.184.216.34", family: 4 }] : [{ address: "127.0.0.1", family: 4 }])
    const first = await checkDestination("https://rebind.example.com/hook", rebinding, false)
    expect(first.ok).toBe(true)
    if (first.ok) expect(first.addresses).toEqual([{ address: "93.184.216.34", family: 4 }])
    const retry = await checkDestination("https://rebind.example.com/hook", rebinding, false)
    expect(retry).toEqual({ ok: false, reason: "rebind.example.com resolves to a forbidden address (127.0.0.1)" })
    expect(calls).toBe(2)
  })
})

describe("webhook signatures", () => {
  it("verify for any body and secret, in either case, and fail for any changed byte", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), fc.string({ minLength: 1, maxLength: 64 }), fc.nat(), (body, secret, position) => {
      const signature = signWebhook(body, secret)
      expect(signature).toMatch(/^[0-9a-f]{64}$/)
      expect(verifyWebhookSignature(body, signature, secret)).toBe(true)
      expect(verifyWebhookSignature(body, signature.toUpperCase(), secret)).toBe(true)
      if (body.length > 0) {
        const changed = body.slice()
        changed[position % body.length] ^= 0x01
        expect(verifyWebhookSignature(changed, signature, secret)).toBe(false)
      }
      const index = position % 64
      const flipped = signature.slice(0, index) + (signature[index] === "0" ? "1" : "0") + signature.slice(index + 1)
      expect(verifyWebhookSignature(body, flipped, secret)).toBe(false)
    }))
  })

  it("rejects anything but 64 hex characters", () => {
    const body = '{"event":"invoice_created"}'
    const signature = signWebhook(body, "whsec_test")
    for (const bad of [undefined, null, "", signature.slice(1), `${signature}0`, `sha256=${signature}`, signature.replace(/.$/, "g")]) {
      expect(verifyWebhookSignature(body, bad, "whsec_test")).toBe(false)
    }
  })
})
