import { Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { DatabaseAvailability } from "../db/DatabaseAvailability.ts"
import { TransportAnswers, transportResponse } from "./ApiErrors.ts"

/** How long a 503 tells the client to wait (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 5

/** A transport answer with `Retry-After`. */
export const withRetryAfter = (answer: { readonly status: number; readonly error: string }) =>
  HttpServerResponse.setHeader(transportResponse(answer), "retry-after", String(RETRY_AFTER_SECONDS))

/** 503 `{error}` naming the database, with `Retry-After`. */
export const databaseUnavailable = () => withRetryAfter(TransportAnswers.databaseUnavailable(RETRY_AFTER_SECONDS))

/**
 * The database gate, declared by each group whose routes need the database (issue #54 item 3):
 * while the database is known to be unavailable (DatabaseAvailability's probe), such a route
 * answers 503 at once, before its authentication or its body is read. Liveness, the metrics,
 * the docs and the static assets declare none and answer regardless. No error schema: the answer
 * is a transport one, so the OpenAPI document is unchanged.
 */
export class DatabaseGate extends HttpApiMiddleware.Service<DatabaseGate>()("Http/DatabaseGate") {}

/** The gate as a function, for the routes outside HttpApi (the payment page). */
export const gatedOnDatabase = (database: DatabaseAvailability["Service"]) => <E, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.suspend(() => database.available() ? httpEffect : Effect.succeed(databaseUnavailable()))

export const DatabaseGateLive = Layer.effect(DatabaseGate, Effect.map(DatabaseAvailability, (database) => gatedOnDatabase(database))).pipe(
  Layer.provide(DatabaseAvailability.layer)
)
