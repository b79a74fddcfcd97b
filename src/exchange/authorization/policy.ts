// Pure rules of an authorization grant: what a valid asset, cap and lifetime are, and how the
// entity is keyed. No I/O.
import { Data, Either } from "effect"

/** An asset, cap, lifetime or entity id outside the rules; `message` is for the user. */
export class PolicyInvalid extends Data.TaggedError("PolicyInvalid")<{ readonly message: string }> {}

type Parsed<A> = Either.Either<A, PolicyInvalid>
const invalid = (message: string): Parsed<never> => Either.left(new PolicyInvalid({ message }))

/** Shortest and longest lifetime a user may grant. */
export const lifetimeMinMs = 1_000
export const lifetimeMaxMs = 366 * 24 * 3600_000

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 }

/** "90s", "15m", "2h", "30d", "500ms", or a sum such as "1h30m". */
export const parseDuration = (text: string): Parsed<number> => {
  const t = text.trim()
  if (!/^(\d+(ms|s|m|h|d))+$/.test(t)) return invalid(`invalid duration "${text}": use e.g. 30s, 15m, 2h, 7d`)
  let total = 0
  for (const [, n, u] of t.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * units[u!]!
  if (total < lifetimeMinMs) return invalid(`duration ${text} is shorter than ${lifetimeMinMs} ms`)
  if (total > lifetimeMaxMs) return invalid(`duration ${text} is longer than 366 days`)
  return Either.right(total)
}

/** Asset codes are upper-case letters and digits, 2 to 12 characters (e.g. BTC, USDT, WLTC). */
export const parseAsset = (text: string): Parsed<string> =>
  /^[A-Z0-9]{2,12}$/.test(text) ? Either.right(text) : invalid(`invalid asset "${text}": 2 to 12 upper-case letters or digits`)

/** A positive decimal with at most 18 fraction digits, normalised (no leading/trailing zeros). */
export const parseCap = (text: string): Parsed<string> => {
  const m = /^(\d{1,20})(?:\.(\d{1,18}))?$/.exec(text.trim())
  if (!m) return invalid(`invalid cap "${text}": a positive decimal such as 100 or 0.5`)
  const int = m[1]!.replace(/^0+(?=\d)/, "")
  const frac = (m[2] ?? "").replace(/0+$/, "")
  const normal = frac === "" ? int : `${int}.${frac}`
  if (/^0(\.0*)?$/.test(normal)) return invalid("cap must be greater than zero")
  return Either.right(normal)
}

export const entityIdOf = (userId: number, asset: string): string => `${userId}:${asset}`

export const parseEntityId = (entityId: string): Parsed<{ userId: number; asset: string }> => {
  const m = /^(\d+):([A-Z0-9]{2,12})$/.exec(entityId)
  return m ? Either.right({ userId: Number(m[1]), asset: m[2]! }) : invalid(`bad Authorization entity id "${entityId}"`)
}
