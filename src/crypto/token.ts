// Bearer secrets (desk API keys, social session tokens): random base62 text, stored only as its
// SHA-256. A stored hash of a 64-character base62 key (381 bits) cannot be reversed or guessed,
// so a plain unsalted hash is enough, and it lets a lookup be one index hit.
import { createHash, randomInt } from "node:crypto"

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/** `length` characters of base62; randomInt is uniform (no modulo bias). */
export const base62Token = (length = 64): string => Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join("")

/** Exactly what base62Token(length) makes: anything else cannot exist and needs no lookup. */
export const isBase62Token = (text: string, length = 64): boolean => text.length === length && /^[A-Za-z0-9]+$/.test(text)

/** Lowercase hex SHA-256 of the UTF-8 text: how a bearer secret is stored and looked up. */
export const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")
