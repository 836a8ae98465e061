import { createServer, type Server, type Socket, connect } from "node:net"

/**
 * A loopback TCP proxy in front of a real server (Redis, PostgreSQL), to make it fail the ways
 * networks do: `stall()` keeps every connection open but moves nothing (a partition: bytes wait,
 * as TCP would retransmit them, and flow again on `restore()`), `cut()` drops every connection and
 * refuses new ones (the server is down), `blackHole()` loses everything from now on, in both
 * directions, new connections included, and never tells either side that the other closed (a
 * partition that does not heal: the server keeps the sessions of a client it no longer hears),
 * `restore()` ends stall and cut.
 */
export interface TcpProxy {
  readonly port: number
  readonly stall: () => void
  readonly blackHole: () => void
  readonly cut: () => Promise<void>
  readonly restore: () => Promise<void>
  readonly close: () => Promise<void>
}

export const startTcpProxy = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  const pairs = new Set<{ client: Socket; upstream: Socket }>()
  let stalled = false
  let blackHoled = false
  /** Bytes that arrived while stalled, in order, delivered on restore. */
  const held: Array<{ readonly to: Socket; readonly chunk: Buffer }> = []
  /** Connections accepted while black-holed: never answered, never closed. */
  const holes = new Set<Socket>()
  const onConnection = (client: Socket) => {
    if (blackHoled) {
      client.on("error", () => undefined)
      holes.add(client)
      return
    }
    const upstream = connect(target.port, target.host)
    const pair = { client, upstream }
    pairs.add(pair)
    const forward = (from: Socket, to: Socket) =>
      from.on("data", (chunk: Buffer) => {
        if (blackHoled) return
        if (stalled) held.push({ to, chunk })
        else to.write(chunk)
      })
    forward(client, upstream)
    forward(upstream, client)
    const end = () => {
      if (blackHoled) return
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on("error", end).on("close", end)
    upstream.on("error", end).on("close", end)
  }
  let server: Server = createServer(onConnection)
  const listen = (port: number) => new Promise<number>((resolve) => server.listen(port, "127.0.0.1", () => resolve((server.address() as { port: number }).port)))
  const port = await listen(0)
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()))
  let listening = true
  return {
    port,
    stall: () => {
      stalled = true
    },
    blackHole: () => {
      blackHoled = true
    },
    cut: async () => {
      stalled = false
      held.length = 0
      for (const { client, upstream } of pairs) {
        client.destroy()
        upstream.destroy()
      }
      pairs.clear()
      if (listening) {
        listening = false
        await closeServer()
      }
    },
    restore: async () => {
      stalled = false
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk)
      if (!listening) {
        server = createServer(onConnection)
        await listen(port)
        listening = true
      }
    },
    close: async () => {
      blackHoled = false
      for (const socket of holes) socket.destroy()
      for (const { client, upstream } of pairs) {
        client.destroy()
        upstream.destroy()
      }
      if (listening) await closeServer()
    }
  }
}
