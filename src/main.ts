import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { AppLive } from "./App.ts"

NodeRuntime.runMain(Layer.launch(AppLive))
