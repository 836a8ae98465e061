/** At most this many shop origins may frame a merchant's payment pages. */
export const MAX_EMBED_ORIGINS = 10

const isLoopbackHost = (host: string) => host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

/**
 * Why `value` cannot be an embed origin, or undefined when it can: an origin exactly as a browser
 * serializes it (scheme, host, port; no path, no trailing slash, lower case), `https:`, or a loopback
 * `http:` origin outside production (a shop on the developer's machine).
 */
const originProblem = (value: string, production: boolean): string | undefined => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return "is not an origin (expected https://host or https://host:port)"
  }
  if (!/^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname)) return "must name one host (no wildcard)"
  if (url.origin !== value) return `must be an origin exactly as browsers write it (${url.origin === "null" ? "https://host" : url.origin}): no path, no trailing slash`
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) {
    return production ? "must be https:// in production (loopback http:// origins are for development)" : undefined
  }
  return "must be an https:// origin (http:// only for loopback addresses outside production)"
}

/** The first problem of a list of embed origins, naming the entry; undefined when the list can be saved. */
export const embedOriginsProblem = (origins: ReadonlyArray<string>, production: boolean): string | undefined => {
  if (origins.length > MAX_EMBED_ORIGINS) return `embedOrigins must have at most ${MAX_EMBED_ORIGINS} origins`
  for (const [index, origin] of origins.entries()) {
    const problem = originProblem(origin, production)
    if (problem !== undefined) return `embedOrigins[${index}] ${problem}`
    if (origins.indexOf(origin) !== index) return `embedOrigins[${index}] is listed twice`
  }
  return undefined
}

/** The payment page's frame-ancestors source list for a merchant's origins ('none' without any). */
export const frameAncestors = (origins: ReadonlyArray<string>) => origins.length === 0 ? "'none'" : origins.join(" ")
