// Canonical JSON as the desk spec defines it (wallet-link messages, attestation payloads):
// object keys sorted recursively, no whitespace, numbers rounded to 6 decimal places,
// non-finite numbers as null, UTF-8 when hashed or signed.
//
// Choices where the spec is silent (pinned by golden vectors in the tests):
// - keys sort by UTF-16 code units (JS default sort), as RFC 8785 (JCS) does;
// - rounding uses Number.prototype.toFixed(6), which rounds the exact binary value. A tie
//   cannot occur at 6 decimals (x.xxxxxx5 is never a binary fraction), so this agrees with
//   Python's round(x, 6); Math.round(x * 1e6) / 1e6 does not (it rounds the product);
// - numbers print like JSON.stringify after rounding: 2.0 → 2, -0 → 0, 1e21 → 1e+21;
// - strings escape like JSON.stringify (non-ASCII stays literal, lone surrogates as \uXXXX);
// - undefined members are dropped and undefined array items become null, as JSON.stringify.
import { createHash } from "node:crypto"

export type CanonicalValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<CanonicalValue | undefined>
  | { readonly [key: string]: CanonicalValue | undefined }

export const DECIMALS = 6

/** Rounds to 6 decimal places; NaN and ±Infinity have no JSON form and become null. */
export const canonicalNumber = (n: number): string => {
  if (!Number.isFinite(n)) return "null"
  const rounded = Number(n.toFixed(DECIMALS))
  return JSON.stringify(rounded === 0 ? 0 : rounded)
}

const encode = (value: unknown): string => {
  if (value === null || value === undefined) return "null"
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false"
    case "number":
      return canonicalNumber(value)
    case "string":
      return JSON.stringify(value)
    case "object": {
      if (Array.isArray(value)) return `[${value.map(encode).join(",")}]`
      const record = value as Record<string, unknown>
      const members = Object.keys(record)
        .filter((k) => record[k] !== undefined)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${encode(record[k])}`)
      return `{${members.join(",")}}`
    }
    default:
      // bigint, function, symbol: outside CanonicalValue; null keeps this total (never throws).
      return "null"
  }
}

export const canonicalJson = (value: CanonicalValue): string => encode(value)

/** Hex sha256 of the canonical JSON's UTF-8 bytes (the attestation payload_hash). */
export const canonicalHash = (value: CanonicalValue): string =>
  createHash("sha256").update(canonicalJson(value), "utf8").digest("hex")
