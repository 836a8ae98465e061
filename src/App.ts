import { Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { Accounts } from "./accounts/Accounts.ts"
import { ApiKeyAdmission } from "./accounts/ApiKeyAdmission.ts"
import { BillingGate } from "./accounts/BillingGate.ts"
import { Secrets } from "./accounts/Secrets.ts"
import { RateLimits } from "./accounts/RateLimits.ts"
import { Sessions } from "./accounts/Sessions.ts"
import { ChainWatchers } from "./chains/ChainWatchers.ts"
import { WatchedOptionsRepo } from "./chains/WatchedOptionsRepo.ts"
import { ForwarderSweeper } from "./chains/evm/ForwarderSweeper.ts"
import { ForwarderSweepRepo } from "./chains/evm/ForwarderSweepRepo.ts"
import { SolanaPrepare } from "./chains/solana/SolanaPrepare.ts"
import { SolanaRpc } from "./chains/solana/SolanaRpc.ts"
import { DatabaseAvailability } from "./db/DatabaseAvailability.ts"
import { AppConfig } from "./config/AppConfig.ts"
import { DatabaseLive } from "./db/Database.ts"
import { DemoMerchantLive } from "./demo/DemoMerchant.ts"
import { serviceUrl } from "./demo/ServiceUrl.ts"
import { BoundAppConfig, HttpServerLive } from "./Http.ts"
import { IdempotencyStore } from "./http/IdempotencyStore.ts"
import { InvoiceChanges } from "./invoices/StatusStream.ts"
import { DeadlineSweeper } from "./chains/DeadlineSweeper.ts"
import { OptionPlanner } from "./payments/OptionPlanner.ts"
import { Invoices } from "./invoices/Invoices.ts"
import { PaymentEvidence } from "./invoices/PaymentEvidence.ts"
import { TestHelpers } from "./testmode/TestHelpers.ts"
import { BitcoinAddressPool } from "./payments/BitcoinAddressPool.ts"
import { PaymentWorker } from "./payments/PaymentWorker.ts"
import { CheckoutSettingsRepo } from "./payments/CheckoutSettingsRepo.ts"
import { DerivationLedger } from "./payments/DerivationLedger.ts"
import { PriceOracle } from "./payments/PriceOracle.ts"
import { railSettingsOf, RailSettingsService } from "./payments/RailSettings.ts"
import { EvmContractCodeLive } from "./chains/evm/EvmContractCode.ts"
import { WebhookConnector, WebhookDispatcher, WebhookResolver } from "./webhooks/WebhookDispatcher.ts"
import { WebhookSettings } from "./webhooks/WebhookSettings.ts"
import { Refunds } from "./refunds/Refunds.ts"
import { RefundsRepo } from "./refunds/RefundsRepo.ts"
import { RefundWatchLive } from "./refunds/RefundWatchLive.ts"
import { RefundTransactions } from "./refunds/RefundTransactions.ts"
import { SolanaRefundTransfersLive } from "./chains/solana/SolanaRefundTransfers.ts"
import { TestPayments } from "./pay/TestPayments.ts"

const Repositories = Layer.mergeAll(
  // Invoice writes publish on the in-process bus the status streams hear.
  InvoiceChanges.publishingRepo,
  CheckoutSettingsRepo.layer,
  DerivationLedger.layer,
  Accounts.layer,
  IdempotencyStore.layer,
  DatabaseAvailability.layer,
  Sessions.layer,
  WebhookSettings.layer,
  WatchedOptionsRepo.layer,
  ForwarderSweepRepo.layer,
  RateLimits.layer.pipe(Layer.provide(RateLimits.store))
)

/** Deployment settings of the payment rails (token contracts, confirmations, forwarder factory, memo prefix). */
const RailSettingsLive = Layer.unwrap(Effect.gen(function*() {
  const { servicePrefix, env: deployment, rails } = yield* AppConfig
  return RailSettingsService.make(railSettingsOf(rails, servicePrefix, deployment === "production"))
}))

/** The refunds (issue #40): the service, what the chain watchers observe through, and the answer to evidence invalidations. */
const RefundsLive = Layer.mergeAll(Refunds.followUp, RefundWatchLive, RefundTransactions.layer.pipe(Layer.provide(SolanaRefundTransfersLive))).pipe(
  Layer.provideMerge(Refunds.layer.pipe(Layer.provide(EvmContractCodeLive))),
  Layer.provideMerge(RefundsRepo.layer)
)

/** Every domain service over the database (no HTTP server): what tests and scripts build on. */
export const ServicesLive = Layer.mergeAll(DerivationLedger.startupCheck, ChainWatchers.layer, ForwarderSweeper.layer, DeadlineSweeper.layer, WebhookDispatcher.layer,
  SolanaPrepare.layer, ApiKeyAdmission.layer, TestHelpers.layer, TestPayments.layer)
  .pipe(
    Layer.provideMerge(PaymentEvidence.layer),
    Layer.provideMerge(Invoices.layer),
    Layer.provideMerge(OptionPlanner.layer),
    Layer.provideMerge(RefundsLive),
    Layer.provideMerge(Repositories),
    Layer.provideMerge(Layer.mergeAll(BitcoinAddressPool.layer, Secrets.layer, InvoiceChanges.layer)),
    Layer.provideMerge(
      Layer.mergeAll(PriceOracle.layer, PaymentWorker.layer, RailSettingsLive, SolanaRpc.layer, WebhookResolver.system, WebhookConnector.system, BillingGate.accountState)
    ),
    Layer.provideMerge(DatabaseLive)
  )

/** Background workers, unless this process is API-only (CHECKOUT_ROLE=api). */
const Workers = Layer.unwrap(Effect.gen(function*() {
  const { role } = yield* AppConfig
  return role === "api" ? Layer.empty : Layer.mergeAll(DeadlineSweeper.worker, BitcoinAddressPool.worker, WebhookDispatcher.worker, ChainWatchers.worker, ForwarderSweeper.worker)
}))

/** Every start with a server says where it listens and on what (the demo banner adds its own lines). */
const ListeningAnnouncement = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const { address } = yield* HttpServer.HttpServer
  const listening = "port" in address ? serviceUrl({ host: config.host, port: address.port }) : address.path
  const database = config.databaseUrl === undefined ? `the embedded database in ${config.dataDir}` : `PostgreSQL at ${new URL(config.databaseUrl).host}`
  yield* Effect.logInfo(`Checkout service listening on ${listening} (public URL ${config.publicUrl}, ${config.env}, role ${config.role}, ${database})`)
}))

/** The HTTP server and demo data, unless this process runs workers only (CHECKOUT_ROLE=workers). */
const Api = Layer.unwrap(Effect.gen(function*() {
  const { role } = yield* AppConfig
  return role === "workers" ? Layer.empty : Layer.mergeAll(DemoMerchantLive, ListeningAnnouncement).pipe(Layer.provide(BoundAppConfig), Layer.provideMerge(HttpServerLive))
}))

/** The whole application for a configuration: services, demo data, the HTTP server and the workers. */
export const makeApp = (config: Layer.Layer<AppConfig>) =>
  Layer.mergeAll(Api, Workers).pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(config)
  )
