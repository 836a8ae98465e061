import ipaddr from "ipaddr.js"

export type UrlProblem = string

/**
 * Save-time rules of a webhook URL: HTTPS, or HTTP for loopback development addresses when
 * allowed; no credentials; no fragment. Returns the problem, or undefined when the URL is fine.
 */
export const urlProblem = (text: string, allowLoopback: boolean): UrlProblem | undefined => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "url must be an absolute URL"
  }
  if (url.username !== "" || url.password !== "") return "url must not contain credentials"
  if (text.includes("#")) return "url must not contain a fragment"
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && allowLoopback && isLoopbackHost(url.hostname)) return undefined
  return allowLoopback ? "url must use https (http only for loopback development addresses)" : "url must use https"
}

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "")

export const isLoopbackHost = (hostname: string): boolean => {
  const host = bare(hostname)
  if (host === "localhost") return true
  return ipaddr.isValid(host) && ipaddr.process(host).range() === "loopback"
}

/**
 * Whether a connection may go to this address: only public unicast. ipaddr.js's `process`
 * turns IPv4-mapped IPv6 into IPv4, so `::ffff:127.0.0.1` is judged as 127.0.0.1; every other
 * range (private, loopback, link-local, unique-local, CGNAT, multicast, unspecified, reserved,
 * documentation, NAT64 64:ff9b::/96, 6to4, Teredo, ...) is refused.
 */
export const addressAllowed = (address: string, allowLoopback: boolean): boolean => {
  if (!ipaddr.isValid(bare(address))) return false
  const range = ipaddr.process(bare(address)).range()
  return range === "unicast" || (allowLoopback && range === "loopback")
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
 * attempt, retries included, so that DNS rebinding is caught. Literal IPs (in any notation: the
 * URL parser normalises decimal, octal and hex IPv4) are checked as they are.
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
