import { Config, ConfigProvider, Effect, Redacted, Result, Schema } from "effect"

/** Every problem of a configuration, one line each naming its variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError"
  readonly problems: ReadonlyArray<string>
  constructor(problems: ReadonlyArray<string>) {
    super(problems.join("\n"))
    this.problems = problems
  }
}

export type Env = Readonly<Record<string, string | undefined>>

/** A variable of the service: its name (or family, for one per network) and the rule its value follows. */
export interface Declared {
  readonly name: string
  readonly rule: string
}

export const listEntries = (value: string) => value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")

export const check = (predicate: (value: string) => boolean) => Schema.String.check(Schema.makeFilter(predicate))

export const isUrlWith = (protocols: ReadonlyArray<string>) => (value: string) => {
  try {
    return protocols.includes(new URL(value).protocol)
  } catch {
    return false
  }
}

/**
 * Reads variables through Effect `Config` from one environment and keeps every problem instead of
 * stopping at the first: a bad value is reported (with its fallback used meanwhile, so that later
 * rules can still be checked) and the whole list is thrown at the end.
 */
export const makeReader = (env: Env) => {
  const provider = ConfigProvider.fromEnv({ env: env as Record<string, string> })
  const problems: Array<string> = []
  const declared: Array<Declared> = []
  const present = (name: string) => env[name] !== undefined && env[name] !== ""

  const read = <A>(name: string, config: Config.Config<A>, rule: string, fallback: A, options: { readonly secret?: boolean; readonly family?: string } = {}): A => {
    declared.push({ name: options.family ?? name, rule })
    const result = Effect.runSync(Effect.result(config.parse(provider)))
    if (Result.isSuccess(result)) return result.success
    problems.push(options.secret === true ? `${name} ${rule}` : `${name} ${rule} (got "${env[name]}")`)
    return fallback
  }

  return {
    problems,
    declared,
    present,
    integer: (name: string, fallback: number, min: number, max: number, family?: string) =>
      read(name, Config.schema(Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max })), name).pipe(Config.withDefault(fallback)),
        `must be an integer from ${min} to ${max}`, fallback, { family }),
    bool: (name: string, fallback: boolean) => read(name, Config.Boolean(name).pipe(Config.withDefault(fallback)), "must be true or false", fallback),
    oneOf: <const T extends string>(name: string, allowed: ReadonlyArray<T>, fallback: T): T =>
      read(name, Config.Literals(allowed, name).pipe(Config.withDefault(fallback)), `must be one of ${allowed.join(", ")}`, fallback),
    text: (name: string, fallback: string) => read(name, Config.String(name).pipe(Config.withDefault(fallback)), "must be text", fallback),
    url: (name: string, protocols: ReadonlyArray<string>, family?: string): string | undefined =>
      read(
        name,
        Config.schema(check(isUrlWith(protocols)), name).pipe(Config.map((value) => value.replace(/\/+$/, "")), Config.option,
          Config.map((value) => value._tag === "Some" ? value.value : undefined)),
        `must be a URL starting with ${protocols.join(" or ")}`,
        undefined,
        { family }
      ),
    matching: (name: string, pattern: RegExp, rule: string, family?: string): string | undefined =>
      read(name, Config.schema(check((value) => pattern.test(value)), name).pipe(Config.option, Config.map((value) => value._tag === "Some" ? value.value : undefined)), rule,
        undefined, {
        family
      }),
    secret: (name: string, pattern: RegExp, rule: string): Redacted.Redacted<string> | undefined =>
      read(name, Config.schema(check((value) =>
        pattern.test(value)
      ), name).pipe(Config.option, Config.map((value) => value._tag === "Some" ? Redacted.make(value.value) : undefined)), rule, undefined, {
        secret: true
      }),
    custom: <A>(name: string, config: Config.Config<A>, rule: string, fallback: A, family?: string) => read(name, config, rule, fallback, { family })
  }
}

export type Reader = ReturnType<typeof makeReader>
