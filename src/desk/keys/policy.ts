// What a desk key may be, and what it may do: pure checks shared by the CLI (and later the
// account page) and the auth middleware.
import { Either } from "effect"
import { type DeskScope, deskScopes } from "../../../schemas/desk/security.ts"

export const feeBpsMax = 10_000
export const callbackUrlLengthMax = 2_048

/** "cashout,rewards" → the scopes, or why not. Duplicates collapse; order follows `deskScopes`. */
export const parseScopes = (text: string): Either.Either<ReadonlyArray<DeskScope>, string> => {
  const names = text.split(",").map((s) => s.trim()).filter((s) => s !== "")
  const unknown = names.filter((n) => !(deskScopes as ReadonlyArray<string>).includes(n))
  if (unknown.length > 0) return Either.left(`unknown scope(s): ${unknown.join(", ").slice(0, 80)}; scopes are ${deskScopes.join(", ")}`)
  if (names.length === 0) return Either.left(`at least one scope is needed: ${deskScopes.join(", ")}`)
  return Either.right(deskScopes.filter((s) => names.includes(s)))
}

/** A negotiated fee: an integer number of basis points, 0 to 10000. */
export const parseFeeBps = (text: string): Either.Either<number, string> =>
  /^\d{1,5}$/.test(text) && Number(text) <= feeBpsMax
    ? Either.right(Number(text))
    : Either.left(`--fee-bps must be an integer from 0 to ${feeBpsMax} (basis points)`)

/** https only (http when allowed: tests, local demos); no credentials in the URL. `name`: how the message names the field. */
export const checkCallbackUrl = (text: string, allowHttp: boolean, name = "--callback-url"): Either.Either<string, string> => {
  if (text.length > callbackUrlLengthMax || !URL.canParse(text)) return Either.left(`${name} must be an absolute URL`)
  const url = new URL(text)
  if (url.protocol !== "https:" && !(allowHttp && url.protocol === "http:")) {
    return Either.left(allowHttp ? `${name} must be http or https` : `${name} must be https (http only with SHARDLINE_CALLBACK_ALLOW_HTTP=true)`)
  }
  if (url.username !== "" || url.password !== "") return Either.left(`${name} must not carry a user name or password`)
  return Either.right(url.toString())
}

/** Why a key may not call a route needing `required` (undefined: any live key), or undefined when it may. */
export const scopeRefusal = (scopes: ReadonlyArray<DeskScope>, required: DeskScope | undefined): string | undefined =>
  required === undefined || scopes.includes(required) ? undefined : `This API key lacks the ${required} scope.`
