import { isIP } from "node:net"
import type { Agent, buildConnector } from "undici"
import { loadUndici } from "./WebhookConnector.ts"

/**
 * Every connection goes to the checked address, whatever the URL's host says; the host name stays
 * in the Host header (undici takes it from the URL) and in TLS SNI.
 */
const pinnedTo = (address: string, connect: buildConnector.connector): buildConnector.connector => (options, callback) => {
  const urlHost = options.hostname.replace(/^\[|\]$/g, "")
  const servername = options.servername || (isIP(urlHost) === 0 ? urlHost : undefined)
  connect({ ...options, hostname: address, servername }, callback)
}

/** Most (origin, address) pairs kept at once; past it the least recently used pair's agent closes. */
const MAX_AGENTS = 256

/**
 * Keep-alive connections for webhook attempts: one undici agent per origin and checked address.
 * An attempt still resolves and checks its destination first, every time, and then reuses only a
 * connection to the very address it has just checked; a host that moves to another address gets
 * a new agent, and one that moves to a forbidden address is refused before any connection. So a
 * merchant's endpoint costs one TCP (and TLS) handshake per keep-alive period instead of one per
 * webhook. Idle connections close after undici's keep-alive time-out (4 s unless the server says
 * otherwise).
 */
export class WebhookAgents {
  private readonly agents = new Map<string, Agent>()
  private readonly connect: buildConnector.connector
  private closed = false

  constructor(connect: buildConnector.connector) {
    this.connect = connect
  }

  async agentFor(origin: string, address: string): Promise<Agent> {
    const key = `${origin} ${address}`
    const found = this.agents.get(key)
    if (found !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.agents.delete(key)
      this.agents.set(key, found)
      return found
    }
    const { Agent } = await loadUndici()
    if (this.closed) throw new Error("the webhook sender is shutting down")
    const agent = this.agents.get(key) ?? new Agent({ connect: pinnedTo(address, this.connect) })
    this.agents.set(key, agent)
    if (this.agents.size > MAX_AGENTS) {
      const [oldest, evicted] = this.agents.entries().next().value!
      this.agents.delete(oldest)
      // In-flight requests on it finish; its connections then close.
      evicted.close().catch(() => undefined)
    }
    return agent
  }

  /** Agents currently kept (for tests). */
  get size(): number {
    return this.agents.size
  }

  async close(): Promise<void> {
    this.closed = true
    const agents = [...this.agents.values()]
    this.agents.clear()
    await Promise.all(agents.map((agent) => agent.destroy().catch(() => undefined)))
  }
}
