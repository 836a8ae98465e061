import { getTransactionDecoder } from "@solana/kit"
import { AccountLayout, ACCOUNT_SIZE, getAssociatedTokenAddressSync, MINT_SIZE, MintLayout, TOKEN_PROGRAM_ID } from "@solana/spl-token"
import { Connection, type Keypair, PublicKey, type Transaction, VersionedTransaction } from "@solana/web3.js"
import { base58 } from "@scure/base"
import { FailedTransactionMetadata, LiteSVM } from "litesvm"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { JsonBody } from "./Json.ts"

const MEMO_PROGRAMS = new Set(["MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr", "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"])
/** Slots a transaction must be behind the tip to count as finalized (the usual distance of the root). */
const FINALIZED_DEPTH = 32
const SLOT_MILLIS = 400

interface TokenBalance {
  readonly accountIndex: number
  readonly mint: string
  readonly owner: string
  readonly programId: string
  readonly uiTokenAmount: { amount: string; decimals: number; uiAmount: number | null; uiAmountString: string }
}

interface Recorded {
  readonly signature: string
  readonly slot: number
  readonly keys: ReadonlyArray<string>
  readonly err: unknown
  readonly memo: string | null
  readonly transaction: unknown
  readonly meta: unknown
  dropped: boolean
}

export type RpcMode = "up" | "down" | "hang"

export interface SolanaNode {
  readonly url: string
  readonly svm: LiteSVM
  /** A web3.js connection to this node, as a wallet or a test would use it. */
  readonly connection: Connection
  readonly slot: () => number
  readonly blockTime: (slot: number) => number
  /** Moves the confirmed tip `slots` slots on. */
  readonly advance: (slots: number) => void
  /** The transaction leaves the chain (a dropped fork): no longer listed, found or given a status. */
  readonly drop: (signature: string) => void
  /** `down` answers 503 to every request; `hang` never answers until the mode changes. */
  readonly setMode: (mode: RpcMode) => void
  readonly requests: (method: string) => number
  /** Installs an SPL mint at a fixed address (the configured USDC stands in this way). */
  readonly installMint: (mint: PublicKey, decimals: number, authority: PublicKey) => void
  /** Sets `owner`'s associated token account of `mint` to `amount` (creating it). */
  readonly setTokenBalance: (owner: PublicKey, mint: PublicKey, amount: bigint) => PublicKey
  readonly tokenBalance: (owner: PublicKey, mint: PublicKey) => bigint | undefined
  readonly airdrop: (to: PublicKey, lamports: bigint) => void
  /** Runs a signed transaction as `sendTransaction` would (works while the RPC is down): its signature, or throws when it fails and `failed` is not allowed. */
  readonly execute: (transaction: Transaction | VersionedTransaction, options?: { readonly allowFailure?: boolean }) => string
  readonly close: () => Promise<void>
}

const decodeTransaction = getTransactionDecoder()

/**
 * A Solana JSON-RPC endpoint over an in-process litesvm (real SPL Token, Associated Token Account
 * and Memo programs): the methods the service's and the tests' `Connection`s call, in the shapes
 * web3.js 1.x decodes. Each transaction is executed in the current slot, which then moves on by
 * one; the node keeps the history litesvm does not (slots, signatures per address, token balances
 * before and after), so that a watcher can page signatures and read transactions as on a real node.
 */
export const startSolanaNode = async (options: { readonly startSlot?: number } = {}): Promise<SolanaNode> => {
  const svm = new LiteSVM()
  let slot = options.startSlot ?? 1_000
  svm.warpToSlot(BigInt(slot))
  const baseSlot = slot
  const baseTime = Math.floor(Date.now() / 1000)
  const blockTime = (at: number) => baseTime + Math.floor(((at - baseSlot) * SLOT_MILLIS) / 1000)

  const history: Array<Recorded> = []
  const bySignature = new Map<string, Recorded>()
  const byAddress = new Map<string, Array<Recorded>>()
  const counts = new Map<string, number>()
  let mode: RpcMode = "up"
  const hanging = new Set<() => void>()

  const advance = (slots: number) => {
    slot += slots
    svm.warpToSlot(BigInt(slot))
  }

  const mintDecimals = (mint: string): number => {
    const account = svm.getAccount(mint as never)
    return account.exists ? MintLayout.decode(Buffer.from(account.data)).decimals : 0
  }

  const tokenBalancesOf = (keys: ReadonlyArray<string>): Array<TokenBalance> => {
    const balances: Array<TokenBalance> = []
    keys.forEach((key, accountIndex) => {
      const account = svm.getAccount(key as never)
      if (!account.exists || account.programAddress !== TOKEN_PROGRAM_ID.toBase58() || account.data.length !== ACCOUNT_SIZE) return
      const decoded = AccountLayout.decode(Buffer.from(account.data))
      const mint = decoded.mint.toBase58()
      const decimals = mintDecimals(mint)
      const amount = decoded.amount
      const whole = amount / 10n ** BigInt(decimals)
      const fraction = (amount % 10n ** BigInt(decimals)).toString().padStart(decimals, "0").replace(/0+$/, "")
      const uiAmountString = fraction === "" ? whole.toString() : `${whole}.${fraction}`
      balances.push({
        accountIndex,
        mint,
        owner: decoded.owner.toBase58(),
        programId: TOKEN_PROGRAM_ID.toBase58(),
        uiTokenAmount: { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString }
      })
    })
    return balances
  }

  const lamportsOf = (keys: ReadonlyArray<string>) => keys.map((key) => Number(svm.getBalance(key as never) ?? 0n))

  const errorJson = (failed: FailedTransactionMetadata): unknown => {
    const err = failed.err() as unknown as { index?: () => number; err?: () => unknown }
    return typeof err.index === "function" ? { InstructionError: [err.index(), { Custom: 1 }] } : { TransactionError: failed.toString().slice(0, 200) }
  }

  /** Executes a wire transaction in the current slot; returns the record, or the failure when `preflight` refuses it. */
  const run = (bytes: Uint8Array, preflight: boolean): { recorded?: Recorded; failure?: string } => {
    const decoded = VersionedTransaction.deserialize(bytes)
    const message = decoded.message
    if (message.addressTableLookups.length > 0) throw new Error("address lookup tables are not supported by the test node")
    const keys = message.staticAccountKeys.map((key) => key.toBase58())
    const preTokenBalances = tokenBalancesOf(keys)
    const preBalances = lamportsOf(keys)
    const result = svm.sendTransaction(decodeTransaction.decode(bytes) as never)
    const failed = result instanceof FailedTransactionMetadata
    if (failed && preflight) return { failure: result.toString() }
    const meta = failed ? result.meta() : result
    const signature = base58.encode(decoded.signatures[0])
    const instructions = message.compiledInstructions.map((instruction) => ({
      programIdIndex: instruction.programIdIndex,
      accounts: [...instruction.accountKeyIndexes],
      data: base58.encode(instruction.data)
    }))
    const memos = message.compiledInstructions
      .filter((instruction) => MEMO_PROGRAMS.has(keys[instruction.programIdIndex]))
      .map((instruction) => `[${instruction.data.length}] ${Buffer.from(instruction.data).toString("utf8")}`)
    const err = failed ? errorJson(result) : null
    const recorded: Recorded = {
      signature,
      slot,
      keys,
      err,
      memo: memos.length === 0 ? null : memos.join("; "),
      transaction: {
        signatures: decoded.signatures.map((bytes) => base58.encode(bytes)),
        message: {
          accountKeys: keys,
          header: message.header,
          recentBlockhash: message.recentBlockhash,
          instructions,
          ...(decoded.version === 0 ? { addressTableLookups: [] } : {})
        }
      },
      meta: {
        err,
        status: err === null ? { Ok: null } : { Err: err },
        fee: 5000,
        preBalances,
        postBalances: lamportsOf(keys),
        innerInstructions: [],
        logMessages: meta.logs(),
        preTokenBalances,
        postTokenBalances: tokenBalancesOf(keys),
        loadedAddresses: { writable: [], readonly: [] },
        computeUnitsConsumed: Number(meta.computeUnitsConsumed()),
        rewards: []
      },
      dropped: false
    }
    history.push(recorded)
    bySignature.set(signature, recorded)
    for (const key of new Set(keys)) {
      const list = byAddress.get(key) ?? []
      list.push(recorded)
      byAddress.set(key, list)
    }
    advance(1)
    return { recorded }
  }

  const status = (recorded: Recorded) => {
    const depth = slot - recorded.slot
    return {
      slot: recorded.slot,
      confirmations: depth >= FINALIZED_DEPTH ? null : depth,
      err: recorded.err,
      status: recorded.err === null ? { Ok: null } : { Err: recorded.err },
      confirmationStatus: depth >= FINALIZED_DEPTH ? "finalized" : "confirmed"
    }
  }

  const live = (signature: string) => {
    const recorded = bySignature.get(signature)
    return recorded === undefined || recorded.dropped ? undefined : recorded
  }

  class RpcError extends Error {
    readonly code: number
    constructor(code: number, message: string) {
      super(message)
      this.code = code
    }
  }

  const context = () => ({ slot, apiVersion: "2.2.0" })

  const methods: Record<string, (params: Array<JsonBody>) => unknown> = {
    getVersion: () => ({ "solana-core": "2.2.0-litesvm", "feature-set": 0 }),
    getHealth: () => "ok",
    getSlot: () => slot,
    getBlockHeight: () => slot,
    getBlockTime: ([at]) => {
      if (typeof at !== "number" || at > slot) throw new RpcError(-32004, `Block not available for slot ${at}`)
      return blockTime(at)
    },
    getLatestBlockhash: () => ({ context: context(), value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot + 150 } }),
    getMinimumBalanceForRentExemption: ([length]) => Number(svm.minimumBalanceForRentExemption(BigInt(length))),
    getBalance: ([address]) => ({ context: context(), value: Number(svm.getBalance(address) ?? 0n) }),
    getAccountInfo: ([address]) => {
      const account = svm.getAccount(address)
      return {
        context: context(),
        value: account.exists
          ? {
            data: [Buffer.from(account.data).toString("base64"), "base64"],
            executable: account.executable,
            lamports: Number(account.lamports),
            owner: account.programAddress,
            rentEpoch: 0,
            space: account.data.length
          }
          : null
      }
    },
    sendTransaction: ([encoded, config]) => {
      const bytes = config?.encoding === "base64" ? Buffer.from(encoded, "base64") : base58.decode(encoded)
      const outcome = run(bytes, config?.skipPreflight !== true)
      if (outcome.failure !== undefined) throw new RpcError(-32002, `Transaction simulation failed: ${outcome.failure.slice(0, 500)}`)
      return outcome.recorded!.signature
    },
    getSignaturesForAddress: ([address, config]) => {
      const limit = Math.min(config?.limit ?? 1_000, 1_000)
      const list = (byAddress.get(address) ?? []).filter((recorded) => !recorded.dropped).reverse()
      let start = 0
      if (config?.before !== undefined) {
        const at = list.findIndex((recorded) => recorded.signature === config.before)
        if (at === -1) return []
        start = at + 1
      }
      const page: Array<unknown> = []
      for (const recorded of list.slice(start)) {
        if (recorded.signature === config?.until || page.length >= limit) break
        page.push({
          signature: recorded.signature,
          slot: recorded.slot,
          err: recorded.err,
          memo: recorded.memo,
          blockTime: blockTime(recorded.slot),
          confirmationStatus: status(recorded).confirmationStatus
        })
      }
      return page
    },
    getTransaction: ([signature, config]) => {
      const recorded = live(signature)
      if (recorded === undefined) return null
      return {
        slot: recorded.slot,
        blockTime: blockTime(recorded.slot),
        transaction: recorded.transaction,
        meta: recorded.meta,
        ...(config?.maxSupportedTransactionVersion === undefined ? {} : { version: "legacy" })
      }
    },
    getSignatureStatuses: ([signatures]) => ({
      context: context(),
      value: (signatures as Array<string>).map((signature) => {
        const recorded = live(signature)
        return recorded === undefined ? null : status(recorded)
      })
    })
  }

  const answer = (request: { id?: unknown; method?: unknown; params?: unknown }) => {
    const method = String(request.method)
    counts.set(method, (counts.get(method) ?? 0) + 1)
    const handler = methods[method]
    if (handler === undefined) return { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: `Method not found: ${method}` } }
    try {
      return { jsonrpc: "2.0", id: request.id, result: handler(Array.isArray(request.params) ? request.params : []) }
    } catch (error) {
      const code = error instanceof RpcError ? error.code : -32603
      return { jsonrpc: "2.0", id: request.id, error: { code, message: error instanceof Error ? error.message : String(error) } }
    }
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    if (mode === "hang") {
      await new Promise<void>((resolve) => hanging.add(resolve))
    }
    if (mode !== "up") {
      response.writeHead(503, { "content-type": "text/plain" }).end("Service Unavailable")
      return
    }
    let body: unknown
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      response.writeHead(400).end()
      return
    }
    const result = Array.isArray(body) ? body.map(answer) : answer(body as Record<string, unknown>)
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result))
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error) => response.writeHead(500).end(String(error)))
  })
  // Longer than any synchronous stretch of a test (a thousand transactions executed in a row):
  // a client must not reuse a keep-alive connection the server closed meanwhile (ECONNRESET).
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const setAccount = (address: PublicKey, data: Uint8Array, programAddress: PublicKey) =>
    svm.setAccount({
      address: address.toBase58(),
      data,
      executable: false,
      lamports: svm.minimumBalanceForRentExemption(BigInt(data.length)),
      programAddress: programAddress.toBase58(),
      space: BigInt(data.length)
    } as never)

  return {
    url,
    svm,
    connection: new Connection(url, { commitment: "confirmed", disableRetryOnRateLimit: true }),
    slot: () => slot,
    blockTime,
    advance,
    drop: (signature) => {
      const recorded = bySignature.get(signature)
      if (recorded === undefined) throw new Error(`unknown transaction ${signature}`)
      recorded.dropped = true
    },
    setMode: (next) => {
      mode = next
      if (next !== "hang") {
        for (const resolve of hanging) resolve()
        hanging.clear()
      }
    },
    requests: (method) => counts.get(method) ?? 0,
    installMint: (mint, decimals, authority) => {
      const data = Buffer.alloc(MINT_SIZE)
      MintLayout.encode({
        mintAuthorityOption: 1,
        mintAuthority: authority,
        supply: 0n,
        decimals,
        isInitialized: true,
        freezeAuthorityOption: 0,
        freezeAuthority: PublicKey.default
      }, data)
      setAccount(mint, data, TOKEN_PROGRAM_ID)
    },
    setTokenBalance: (owner, mint, amount) => {
      const address = getAssociatedTokenAddressSync(mint, owner, true)
      const data = Buffer.alloc(ACCOUNT_SIZE)
      AccountLayout.encode({
        mint,
        owner,
        amount,
        delegateOption: 0,
        delegate: PublicKey.default,
        state: 1,
        isNativeOption: 0,
        isNative: 0n,
        delegatedAmount: 0n,
        closeAuthorityOption: 0,
        closeAuthority: PublicKey.default
      }, data)
      setAccount(address, data, TOKEN_PROGRAM_ID)
      return address
    },
    tokenBalance: (owner, mint) => {
      const account = svm.getAccount(getAssociatedTokenAddressSync(mint, owner, true).toBase58() as never)
      return account.exists ? AccountLayout.decode(Buffer.from(account.data)).amount : undefined
    },
    airdrop: (to, lamports) => {
      const result = svm.airdrop(to.toBase58() as never, lamports as never)
      if (result instanceof FailedTransactionMetadata) throw new Error(`airdrop failed: ${result.toString()}`)
    },
    execute: (transaction, { allowFailure = false } = {}) => {
      const outcome = run(transaction.serialize(), !allowFailure)
      if (outcome.failure !== undefined) throw new Error(`transaction failed: ${outcome.failure}`)
      return outcome.recorded!.signature
    },
    close: async () => {
      mode = "up"
      for (const resolve of hanging) resolve()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
    }
  }
}

/** Signs a base64 wire transaction (as the prepare endpoint returns it) with the payer's key only. */
export const signPrepared = (base64: string, payer: Keypair) => {
  const transaction = VersionedTransaction.deserialize(Buffer.from(base64, "base64"))
  transaction.sign([payer])
  return transaction
}
