import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { TLSSocket } from "node:tls"
import { buildConnector } from "undici"
import type { ResolvedAddress, Resolver } from "../../src/webhooks/Destination.ts"

/**
 * A self-signed test certificate for hooks.merchant.test and *.merchant.test (valid until 2126),
 * so that HTTPS receivers on loopback can check SNI, Host and certificate verification end to end.
 * Test-only key material: it protects nothing.
 */
export const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwlftSOr9pbE5hsNn
vMz2Qp35bMj14yhxAWdFSRA7KrGhRANCAAStHEfZFGR8ea2hhwZfOHgpWNazuPaK
86bCKUSXm+858SxFnN0zN+ftBE0m5oS7Mmq2REMK0ZFqmBBvw0QFsHTo
-----END PRIVATE KEY-----
`
export const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBxzCCAWygAwIBAgIUBvMdNaHYHY87rA31SOKb4j9Aiy4wCgYIKoZIzj0EAwIw
HjEcMBoGA1UEAwwTaG9va3MubWVyY2hhbnQudGVzdDAgFw0yNjExMjIxMzA5NDha
GA8yMTI2MTAyOTEzMDk0OFowHjEcMBoGA1UEAwwTaG9va3MubWVyY2hhbnQudGVz
dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABK0cR9kUZHx5raGHBl84eClY1rO4
9orzpsIpRJeb7znxLEWc3TM35+0ETSbmhLsyarZEQwrRkWqYEG/DRAWwdOijgYUw
gYIwHQYDVR0OBBYEFNa9mgPGpgLzEWfjlJMgcJsNQEE0MB8GA1UdIwQYMBaAFNa9
mgPGpgLzEWfjlJMgcJsNQEE0MA8GA1UdEwEB/wQFMAMBAf8wLwYDVR0RBCgwJoIT
aG9va3MubWVyY2hhbnQudGVzdIIPKi5tZXJjaGFudC50ZXN0MAoGCCqGSM49BAMC
A0kAMEYCIQCHS4Pppae86wmzUOIeP4vF8oawca2dK3VqAdGIXM7kQgIhAPYA+dzr
/FXxQlXQRABkCovJ5i+eZ0hmTuQYqjcoyHmm
-----END CERTIFICATE-----
`

export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: string
  /** The TLS server name the client asked for (HTTPS receivers only). */
  readonly servername: string | null
}

export type Answer = (response: ServerResponse, request: ReceivedRequest) => void

export interface WebhookReceiver {
  readonly port: number
  /** The receiver's URL for a path, with the given host (default 127.0.0.1). */
  readonly url: (path: string, host?: string) => string
  readonly on: (path: string, answer: Answer) => void
  readonly received: (path: string) => ReadonlyArray<ReceivedRequest>
  readonly close: () => Promise<void>
}

/** A real HTTP(S) receiver on 127.0.0.1; each path answers as its test decides (unknown paths: 410). */
export const startWebhookReceiver = async (options: { readonly tls?: boolean } = {}): Promise<WebhookReceiver> => {
  const answers = new Map<string, Answer>()
  const log = new Map<string, Array<ReceivedRequest>>()
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const path = new URL(request.url ?? "/", "http://receiver").pathname
      const entry: ReceivedRequest = {
        method: request.method ?? "",
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        servername: options.tls === true ? ((request.socket as TLSSocket).servername || null) : null
      }
      log.set(path, [...(log.get(path) ?? []), entry])
      const answer = answers.get(path) ?? ((reply: ServerResponse) => reply.writeHead(410).end())
      answer(response, entry)
    })
  }
  const server: Server = options.tls === true ? createHttpsServer({ key: TEST_KEY, cert: TEST_CERT }, handle) : createHttpServer(handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  const scheme = options.tls === true ? "https" : "http"
  return {
    port: address.port,
    url: (path, host = "127.0.0.1") => `${scheme}://${host}:${address.port}${path}`,
    on: (path, answer) => void answers.set(path, answer),
    received: (path) => log.get(path) ?? [],
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

/** DNS answers by host name, in turn: the n-th lookup of a host gets its n-th answer (the last one repeats). */
export const scriptedResolver = (answers: Record<string, ReadonlyArray<ReadonlyArray<string>>>) => {
  const lookups: Array<string> = []
  const resolve: Resolver = async (hostname) => {
    const script = answers[hostname]
    if (script === undefined) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`)
    const turn = lookups.filter((name) => name === hostname).length
    lookups.push(hostname)
    return script[Math.min(turn, script.length - 1)].map((address): ResolvedAddress => ({ address, family: address.includes(":") ? 6 : 4 }))
  }
  return { resolve, lookups }
}

export interface Dial {
  readonly hostname: string
  readonly port: string
  readonly servername: string | undefined
}

/**
 * A connector that trusts the test certificate (verification stays on) and records every dial.
 * `network` stands in for the internet: a public test address it lists is reached on loopback.
 */
export const recordingConnector = (network: Readonly<Record<string, string>> = {}) => {
  const dials: Array<Dial> = []
  const base = buildConnector({ ca: TEST_CERT, timeout: 10_000, allowH2: false })
  const connect: buildConnector.connector = (options, callback) => {
    dials.push({ hostname: options.hostname, port: options.port, servername: options.servername })
    base({ ...options, hostname: network[options.hostname] ?? options.hostname }, callback)
  }
  return { connect, dials }
}
