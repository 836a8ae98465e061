import type { AppConfigShape } from "./config/AppConfig.ts"

interface Chained {
  readonly message?: unknown
  readonly code?: unknown
  readonly cause?: unknown
  readonly reason?: unknown
  readonly _tag?: unknown
}

/** The error and everything it was caused by, outermost first (`cause`, and SqlError's `reason`). */
const chain = (error: unknown): ReadonlyArray<Chained> => {
  const links: Array<Chained> = []
  let current: unknown = error
  while (current !== null && typeof current === "object" && links.length < 16 && !links.includes(current as Chained)) {
    const link = current as Chained
    links.push(link)
    current = link.reason !== undefined && typeof link.reason === "object" ? link.reason : link.cause
  }
  return links
}

const innermostMessage = (links: ReadonlyArray<Chained>): string => {
  for (const link of [...links].reverse()) {
    if (typeof link.message === "string" && link.message.trim() !== "") return link.message.trim()
  }
  return "unknown error"
}

const databaseLocation = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port === "" ? "5432" : parsed.port}${parsed.pathname}`
  } catch {
    return "its address"
  }
}

/**
 * One line that says why the service could not start and which setting to look at: a port in
 * use, a database that cannot be reached or refuses the role, or else the innermost error.
 */
export const describeStartupFailure = (error: unknown, config: Pick<AppConfigShape, "host" | "port" | "databaseUrl" | "dataDir">): string => {
  const links = chain(error)
  const code = links.map((link) => link.code).find((candidate) => typeof candidate === "string")
  if (code === "EADDRINUSE") return `port ${config.port} on ${config.host} is already in use (set PORT, or stop the other process)`
  if (code === "EACCES" && links.some((link) => link._tag === "ServeError")) return `cannot listen on ${config.host}:${config.port}: permission denied (PORT, HOST)`
  if (links.some((link) => link._tag === "SqlError")) {
    return config.databaseUrl === undefined
      ? `the embedded database in CHECKOUT_DATA_DIR (${config.dataDir}) could not be opened: ${innermostMessage(links)}`
      : `cannot use the database at DATABASE_URL (${databaseLocation(config.databaseUrl)}): ${innermostMessage(links)}`
  }
  return innermostMessage(links)
}
