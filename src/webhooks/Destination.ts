import ipaddr from "ipaddr.js"

export type UrlProblem = string

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "")

/** IANA's global unicast block: every other IPv6 address is special-purpose or unassigned. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3")
const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96")

/**
 * The address as the WHATWG parser (and the kernel) reads it: ipaddr.js would read the
 * IPv4-compatible `::8.8.8.8` as the IPv4-mapped `::ffff:8.8.8.8`.
 */
const canonicalIpv6 = (host: string): string | undefined => {
  try {
    return new URL(`http://[${host}]/`).hostname.slice(1, -1)
  } catch {
    return undefined
  }
}

const ipv4Allowed = (address: ipaddr.IPv4, allowLoopback: boolean) => {
  const range = address.range()
  return range === "unicast" || (allowLoopback && range === "loopback")
}

/**
 * Whether a connection may go to this address: only public unicast. An IPv4-mapped address
 * (`::ffff:127.0.0.1`) and a well-known-prefix NAT64 address (64:ff9b::/96) are judged by the IPv4
 * address they carry. Everything else that is not plain public unicast is refused: private,
 * loopback (unless allowed), link-local, unique-local, CGNAT, multicast, broadcast, unspecified,
 * reserved, documentation, benchmarking, IPv4-compatible, local-use NAT64, 6to4, Teredo, ...
 */
export const addressAllowed = (address: string, allowLoopback: boolean): boolean => {
  const host = bare(address)
  if (host.includes(":")) {
    const canonical = canonicalIpv6(host)
    if (canonical === undefined || !ipaddr.IPv6.isValid(canonical)) return false
    const v6 = ipaddr.IPv6.parse(canonical)
    if (v6.isIPv4MappedAddress()) return ipv4Allowed(v6.toIPv4Address(), allowLoopback)
    if (v6.match(NAT64_WELL_KNOWN)) return ipv4Allowed(ipaddr.fromByteArray(v6.toByteArray().slice(12)) as ipaddr.IPv4, allowLoopback)
    if (allowLoopback && v6.range() === "loopback") return true
    return v6.match(GLOBAL_UNICAST_V6) && v6.range() === "unicast"
  }
  return ipaddr.IPv4.isValid(host) && ipv4Allowed(ipaddr.IPv4.parse(host), allowLoopback)
}

export const isLoopbackHost = (hostname: string): boolean => {
  const host = bare(hostname)
  if (host === "localhost") return true
  return ipaddr.isValid(host) && ipaddr.process(host).range() === "loopback"
}

// C0 and C1 controls, DEL and the bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE, ...), raw
// or percent-encoded, and raw whitespace: the URL parser silently drops a raw TAB, CR or LF and
// keeps an encoded one, so the stored text and the URL contacted would differ; a bidirectional
// override shows the merchant another URL than the one contacted; a raw space is never part of a URL.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\s/
const ENCODED_CONTROL = /%(?:[01][0-9a-f]|7f)|%c2%[89][0-9a-f]|%e2%80%(?:8[ef]|a[a-e])|%e2%81%a[6-9]|%d8%9c/i

export const hasControlCharacter = (text: string): boolean => RAW_CONTROL.test(text) || ENCODED_CONTROL.test(text)

const CONTROL_CHARACTER_PROBLEM = "url must not contain spaces or control characters (CR, LF, TAB, NUL, U+202E, ...), raw or percent-encoded (a space as %20)"

/**
 * Save-time rules of a webhook URL: no control characters; HTTPS, or HTTP for loopback development
 * addresses when allowed; no credentials; no fragment; a literal IP address must be one that may be contacted.
 * Returns the problem, or undefined when the URL is fine. The WHATWG parser has already turned
 * decimal, octal, hex and short IPv4 forms into dotted quads, so they are judged like any literal.
 */
export const urlProblem = (text: string, allowLoopback: boolean): UrlProblem | undefined => {
  if (hasControlCharacter(text)) return CONTROL_CHARACTER_PROBLEM
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "url must be an absolute URL"
  }
  if (url.username !== "" || url.password !== "") return "url must not contain credentials"
  if (text.includes("#")) return "url must not contain a fragment"
  const secure = url.protocol === "https:"
  if (!secure && !(url.protocol === "http:" && allowLoopback && isLoopbackHost(url.hostname))) {
    return allowLoopback ? "url must use https (http only for loopback development addresses)" : "url must use https"
  }
  const host = bare(url.hostname)
  if (ipaddr.isValid(host) && !addressAllowed(host, allowLoopback)) return "url must not point to a private or reserved address"
  return undefined
}

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export type CheckedDestination =
  | { readonly ok: true; readonly url: URL; readonly addresses: ReadonlyArray<ResolvedAddress> }
  | { readonly ok: false; readonly reason: string }

/**
 * Resolves the host of a webhook URL and checks every address it resolves to; run on every
 * attempt, retries included, so that DNS rebinding is caught. Literal IPs are checked as they are.
 */
export const checkDestination = async (text: string, resolve: Resolver, allowLoopback: boolean): Promise<CheckedDestination> => {
  const problem = urlProblem(text, allowLoopback)
  if (problem !== undefined) return { ok: false, reason: problem }
  const url = new URL(text)
  const host = bare(url.hostname)
  let addresses: ReadonlyArray<ResolvedAddress>
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }]
  } else {
    try {
      addresses = await resolve(host)
    } catch (error) {
      return { ok: false, reason: `DNS lookup of ${host} failed: ${error instanceof Error ? error.message : String(error)}` }
    }
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} resolves to no address` }
  const forbidden = addresses.find((entry) => !addressAllowed(entry.address, allowLoopback))
  if (forbidden !== undefined) return { ok: false, reason: `${host} resolves to a forbidden address (${forbidden.address})` }
  return { ok: true, url, addresses }
}
