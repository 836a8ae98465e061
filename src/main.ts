import "./ops/V8Flags.ts"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Layer } from "effect"
import { makeApp } from "./App.ts"
import { AppConfig, ConfigError, parseConfig } from "./config/AppConfig.ts"
import { describeStartupFailure } from "./StartupFailure.ts"

const readConfig = () => {
  try {
    return parseConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) console.error(`Configuration error: ${problem}`)
      process.exit(1)
    }
    throw error
  }
}

const config = readConfig()
let started = false

// A failure before the service is up is one line naming the setting to look at, not a trace.
const startupFailure = (cause: Cause.Cause<unknown>) =>
  Effect.sync(() => {
    console.error(`Start-up failed: ${describeStartupFailure(Cause.squash(cause), config)}`)
    process.exit(1)
  })

NodeRuntime.runMain(
  Layer.launch(makeApp(Layer.succeed(AppConfig, config)).pipe(
    Layer.tap(() => Effect.sync(() => (started = true)))
  )).pipe(Effect.catchCause((cause) => started || Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : startupFailure(cause)))
)
