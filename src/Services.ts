import { Layer } from "effect"
import { Accounts } from "./accounts/Accounts.ts"
import { ApiKeyAdmission } from "./accounts/ApiKeyAdmission.ts"
import { BillingGate } from "./accounts/BillingGate.ts"
import { RateLimits } from "./accounts/RateLimits.ts"
import { Secrets } from "./accounts/Secrets.ts"
import { Sessions } from "./accounts/Sessions.ts"
import { ChainWatchers } from "./chains/ChainWatchers.ts"
import { InvoiceExpiry } from "./expiry/InvoiceExpiry.ts"
import { ForwarderSweeper } from "./chains/evm/ForwarderSweeper.ts"
import { ForwarderSweepRepo } from "./chains/evm/ForwarderSweepRepo.ts"
import { SolanaPrepare } from "./chains/solana/SolanaPrepare.ts"
import { SolanaRefundTransfersLive } from "./chains/solana/SolanaRefundTransfers.ts"
import { SolanaRpc } from "./chains/solana/SolanaRpc.ts"
import { WatchedOptionsRepo } from "./chains/watcher/WatchedOptionsRepo.ts"
import { DatabaseLive } from "./db/Database.ts"
import { DatabaseAvailability } from "./db/DatabaseAvailability.ts"
import { IdempotencyStore } from "./http/IdempotencyStore.ts"
import { InvoiceChanges } from "./invoices/InvoiceChanges.ts"
import { Invoices } from "./invoices/Invoices.ts"
import { PaymentEvidence } from "./invoices/PaymentEvidence.ts"
import { BitcoinAddressPool } from "./payments/BitcoinAddressPool.ts"
import { CheckoutSettingsRepo } from "./payments/CheckoutSettingsRepo.ts"
import { DerivationLedger } from "./payments/DerivationLedger.ts"
import { OptionPlanner } from "./payments/OptionPlanner.ts"
import { PaymentWorker } from "./payments/PaymentWorker.ts"
import { PriceOracle } from "./payments/PriceOracle.ts"
import { RailSettings } from "./payments/RailSettings.ts"
import { Refunds } from "./refunds/Refunds.ts"
import { RefundsRepo } from "./refunds/RefundsRepo.ts"
import { RefundTransactions } from "./refunds/RefundTransactions.ts"
import { RefundWatchLive } from "./refunds/RefundWatchLive.ts"
import { WebhookDispatcher } from "./webhooks/WebhookDispatcher.ts"
import { WebhookConnector } from "./webhooks/WebhookConnector.ts"
import { WebhookResolver } from "./webhooks/WebhookResolver.ts"
import { WebhookSettings } from "./webhooks/WebhookSettings.ts"
import { TestHelpers } from "./testmode/TestHelpers.ts"
import { TestPayments } from "./pay/TestPayments.ts"

/**
 * The ports a lower floor declares and a higher one implements: what evidence does after a
 * coverage loss (the refunds) and Solana refund transfers. The only
 * wiring the services leave to the root, with the configuration and the database.
 */
export const Ports = Layer.mergeAll(Refunds.followUp, RefundTransactions.layer).pipe(
  Layer.provideMerge(SolanaRefundTransfersLive)
)

/**
 * Every domain service over the database (no HTTP server, no workers): what the application
 * gives its API and workers, and what tests and scripts build on. Each layer brings its own
 * dependencies; a layer named in several places is built once (memoized by reference), so the
 * database client, the invoice bus and each service are one instance.
 */
export const ServicesLive = Layer.mergeAll(
  Accounts.layer,
  ApiKeyAdmission.layer,
  BillingGate.accountState,
  RateLimits.layer,
  Secrets.layer,
  Sessions.layer,
  ChainWatchers.layer,
  InvoiceExpiry.layer,
  ForwarderSweeper.layer,
  ForwarderSweepRepo.layer,
  SolanaPrepare.layer,
  SolanaRpc.layer,
  WatchedOptionsRepo.layer,
  DatabaseAvailability.layer,
  IdempotencyStore.layer,
  InvoiceChanges.layer,
  InvoiceChanges.publishingRepo,
  InvoiceChanges.publishingEvidenceRepo,
  Invoices.layer,
  PaymentEvidence.layer,
  BitcoinAddressPool.layer,
  CheckoutSettingsRepo.layer,
  DerivationLedger.layer,
  DerivationLedger.startupCheck.pipe(Layer.provide(DerivationLedger.layer)),
  OptionPlanner.layer,
  PaymentWorker.layer,
  PriceOracle.layer,
  RailSettings.layer,
  Refunds.layer,
  RefundsRepo.layer,
  RefundWatchLive,
  WebhookDispatcher.layer,
  WebhookResolver.system,
  WebhookConnector.system,
  WebhookSettings.layer,
  TestHelpers.layer,
  TestPayments.layer
).pipe(Layer.provideMerge(Ports), Layer.provideMerge(DatabaseLive))
