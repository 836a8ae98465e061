import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { type ChainCursorState, chainWatcherStatuses } from "./ChainWatcherStatus.ts"
import { MonitoringRepo } from "./MonitoringRepo.ts"

/** What the operator's endpoints (health, chain watchers, metrics) read of the database. */
export class Monitoring extends Context.Service<Monitoring, {
  /** Whether the database answers and its schema is current. */
  readonly ready: Effect.Effect<boolean>
  /** Each configured network's watcher, as GET /api/chain-watchers answers it. */
  readonly chainWatchers: Effect.Effect<{ readonly watchers: ReturnType<typeof chainWatcherStatuses> }>
  /** The database's gauges for a metrics scrape: the watchers' cursors and the webhook backlog. */
  readonly gauges: Effect.Effect<{ readonly cursors: ReadonlyArray<ChainCursorState>; readonly webhookBacklog: number }>
}>()("Ops/Monitoring") {
  static readonly layer = Layer.effect(
    Monitoring,
    Effect.gen(function*() {
      const repo = yield* MonitoringRepo
      const { chains } = yield* AppConfig
      return {
        ready: repo.ready,
        chainWatchers: Effect.map(repo.chainCursors, (states) => ({ watchers: chainWatcherStatuses(chains, states) })),
        gauges: Effect.all({ cursors: repo.chainCursors, webhookBacklog: repo.webhookBacklog }, { concurrency: "unbounded" })
      }
    })
  ).pipe(Layer.provide(MonitoringRepo.layer))
}
