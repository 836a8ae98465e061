import "./runtime/V8Flags.ts"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Layer } from "effect"
import { makeApp } from "./App.ts"
import { AppConfig, ConfigError, parseConfig } from "./config/AppConfig.ts"
import { releaseBootMemory } from "./runtime/BootMemory.ts"

const readConfig = () => {
  try {
    return parseConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`)
      process.exit(1)
    }
    throw error
  }
}

NodeRuntime.runMain(Layer.launch(makeApp(Layer.succeed(AppConfig, readConfig())).pipe(Layer.tap(() => releaseBootMemory))))
