// The readers every config module uses (the platform's Config.ts and each service's own): a
// SHARDLINE_ name, bounded integers, optional secrets and public URLs. Messages below never repeat
// a URL or key: they may carry a password or a provider's API key.
import { Config, ConfigError, Option, Redacted } from "effect"

/** `SHARDLINE_<name>`: every variable of ours carries the prefix (plain HOST/PORT belong to others). */
export const settingName = (name: string) => `SHARDLINE_${name}`

/** An integer setting with bounds: 0 or a negative would make a busy loop, a stalled pool or a lapsed lock. */
export const boundedInt = (name: string, min: number, max: number) =>
  Config.integer(settingName(name)).pipe(Config.validate({ message: `must be an integer from ${min} to ${max}`, validation: (n) => n >= min && n <= max }))

export const intIn = (name: string, fallback: number, min: number, max: number) => boundedInt(name, min, max).pipe(Config.withDefault(fallback))

/** A refused setting, as the ConfigError a node prints in one line: `(Invalid data at SHARDLINE_<name>: "<message>")`. */
export const invalidSetting = (name: string, message: string) => ConfigError.InvalidData([settingName(name)], message)

/** A secret that may be unset; set to blanks counts as unset. */
export const optionalRedacted = (name: string) =>
  Config.option(Config.redacted(settingName(name))).pipe(Config.map(Option.filter((v) => Redacted.value(v).trim() !== "")))

/** An http(s) origin with an optional path, no trailing slash, no credentials. */
export const publicUrl = (name: string) =>
  Config.option(Config.string(settingName(name)).pipe(
    Config.validate({
      message: "must be an http(s) URL without a user name, password, query or fragment",
      validation: (u) => URL.canParse(u) && ["http:", "https:"].includes(new URL(u).protocol) && new URL(u).username === "" &&
        new URL(u).password === "" && new URL(u).search === "" && new URL(u).hash === ""
    }),
    Config.map((u) => u.replace(/\/+$/, ""))
  ))
