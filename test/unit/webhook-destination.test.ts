import { describe, expect, it } from "vitest"
import { addressAllowed, checkDestination, type Resolver, urlProblem } from "../../src/webhooks/Destination.ts"

/** One or more addresses of every range the issue forbids, in IPv4, IPv6, mapped and NAT64 forms. */
const FORBIDDEN = {
  private: ["10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1"],
  loopback: ["127.0.0.1", "127.8.9.10", "::1"],
  linkLocal: ["169.254.169.254", "fe80::1"],
  uniqueLocal: ["fc00::1", "fd12:3456::1"],
  cgnat: ["100.64.0.1", "100.127.255.254"],
  multicast: ["224.0.0.1", "239.255.255.250", "ff02::1"],
  unspecified: ["0.0.0.0", "0.1.2.3", "::"],
  broadcast: ["255.255.255.255"],
  reserved: ["240.0.0.1", "192.0.0.8", "192.88.99.1", "198.18.0.1", "3fff::1", "fec0::1", "100::1", "5f00::1"],
  documentation: ["192.0.2.1", "198.51.100.7", "203.0.113.9", "2001:db8::1"],
  ipv4Mapped: ["::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:7f00:1", "0:0:0:0:0:ffff:c0a8:101"],
  ipv4Compatible: ["::127.0.0.1", "::10.0.0.1", "::8.8.8.8"],
  ipv4Translated: ["::ffff:0:7f00:1"],
  nat64: ["64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::5db8:d822"],
  tunnels: ["2002:7f00:1::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
  notIpv6GlobalUnicast: ["4000::1", "e000::1"]
}

const ALLOWED = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:93.184.216.34", "64:ff9b::5db8:d822"]

const fixed = (...addresses: Array<string>): Resolver => async () => addresses.map((address) => ({ address, family: address.includes(":") ? 6 as const : 4 as const }))

describe("webhook destinations", () => {
  it("allow only public unicast addresses", () => {
    for (const [range, addresses] of Object.entries(FORBIDDEN)) {
      for (const address of addresses) expect(addressAllowed(address, false), `${range} ${address}`).toBe(false)
    }
    for (const address of ALLOWED) expect(addressAllowed(address, false), address).toBe(true)
    for (const junk of ["not-an-address", "fe80::1%eth0", "2606:4700::1111%1", "1.2.3.4.5", ""]) expect(addressAllowed(junk, false), junk).toBe(false)
  })

  it("allow loopback only when configuration allows it, and nothing else private with it", () => {
    for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1"]) expect(addressAllowed(address, true), address).toBe(true)
    for (const address of ["10.0.0.1", "169.254.169.254", "0.0.0.0", "::", "fd00::1"]) expect(addressAllowed(address, true), address).toBe(false)
  })

  it("refuse a host that resolves to any forbidden address, even next to a public one", async () => {
    for (const address of Object.values(FORBIDDEN).flat()) {
      const checked = await checkDestination("https://hooks.example.com/x", fixed("93.184.216.34", address), false)
      expect(checked.ok, address).toBe(false)
    }
    expect((await checkDestination("https://hooks.example.com/x", fixed("93.184.216.34", "2606:4700::1"), false)).ok).toBe(true)
  })

  it("refuse literal addresses in every notation", async () => {
    const literals = [
      "https://127.0.0.1/",
      "https://2130706433/",
      "https://0177.0.0.1/",
      "https://0x7f.0.0.1/",
      "https://0x7f000001/",
      "https://127.1/",
      "https://0/",
      "https://0.0.0.0/",
      "https://[::]/",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:7f00:1]/",
      "https://[0:0:0:0:0:ffff:7f00:1]/",
      "https://[::127.0.0.1]/",
      "https://10.0.0.1/",
      "https://0xa.0.0.1/",
      "https://012.0.0.1/",
      "https://167772161/",
      "https://[64:ff9b::7f00:1]/",
      "https://[fe80::1]/",
      "https://169.254.169.254/",
      "https://[::ffff:a9fe:a9fe]/",
      "https://100.64.0.1/",
      "https://127.0.0.1./"
    ]
    for (const url of literals) {
      expect(urlProblem(url, false), url).toBe("url must not point to a private or reserved address")
      const checked = await checkDestination(url, fixed("93.184.216.34"), false)
      expect(checked.ok, url).toBe(false)
    }
    expect(urlProblem("https://93.184.216.34/hook", false)).toBeUndefined()
    expect(urlProblem("https://[2606:4700::1111]/hook", false)).toBeUndefined()
  })

  it("refuse credentials, fragments and plain HTTP outside loopback development", () => {
    expect(urlProblem("https://user:pass@hooks.example.com/", false)).toBe("url must not contain credentials")
    expect(urlProblem("https://user@hooks.example.com/", false)).toBe("url must not contain credentials")
    expect(urlProblem("https://:pass@hooks.example.com/", false)).toBe("url must not contain credentials")
    expect(urlProblem("https://hooks.example.com/#frag", false)).toBe("url must not contain a fragment")
    expect(urlProblem("https://hooks.example.com/#", false)).toBe("url must not contain a fragment")
    expect(urlProblem("http://hooks.example.com/", true)).toMatch(/https/)
    expect(urlProblem("http://127.0.0.1:8080/hook", false)).toMatch(/https/)
    expect(urlProblem("http://localhost:8080/hook", false)).toMatch(/https/)
    expect(urlProblem("http://10.0.0.1/hook", true)).toMatch(/https/)
    expect(urlProblem("http://127.0.0.1:8080/hook", true)).toBeUndefined()
    expect(urlProblem("http://[::1]:8080/hook", true)).toBeUndefined()
    expect(urlProblem("http://localhost:8080/hook", true)).toBeUndefined()
    expect(urlProblem("ftp://hooks.example.com/", false)).toMatch(/https/)
    expect(urlProblem("hooks.example.com/x", false)).toBe("url must be an absolute URL")
    expect(urlProblem("https://hooks.example.com/path?x=1", false)).toBeUndefined()
  })

  it("check DNS on every attempt: a rebinding to 127.0.0.1 on the retry is refused", async () => {
    let calls = 0
    const rebinding: Resolver = async () => (calls++ === 0 ? [{ address: "93.184.216.34", family: 4 }] : [{ address: "127.0.0.1", family: 4 }])
    const first = await checkDestination("https://rebind.example.com/hook", rebinding, false)
    expect(first.ok).toBe(true)
    if (first.ok) expect(first.addresses).toEqual([{ address: "93.184.216.34", family: 4 }])
    const retry = await checkDestination("https://rebind.example.com/hook", rebinding, false)
    expect(retry).toEqual({ ok: false, reason: "rebind.example.com resolves to a forbidden address (127.0.0.1)" })
    expect(calls).toBe(2)
  })

  it("refuse a host that does not resolve, or resolves to nothing", async () => {
    const failing: Resolver = async () => {
      throw new Error("getaddrinfo ENOTFOUND nowhere.example.com")
    }
    expect(await checkDestination("https://nowhere.example.com/", failing, false)).toMatchObject({ ok: false, reason: expect.stringMatching(/DNS lookup/) })
    expect(await checkDestination("https://empty.example.com/", fixed(), false)).toMatchObject({ ok: false, reason: expect.stringMatching(/no address/) })
  })
})
