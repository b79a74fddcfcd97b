// Text no route can take, refused before any handler decodes or stores it: JSON nested deeper than
// any request needs (a 10,000-deep body overflowed the stack while its decode error was formatted),
// a NUL character (Postgres text and jsonb refuse it), a UTF-16 surrogate without its pair (jsonb
// refuses it, encodeURIComponent throws). Each was answered 503, which a partner retries forever.
// Pure: a linear scan of the body text, no parse.

/** Deepest JSON a request may nest; the deepest schema we take is a handful of levels. */
export const jsonDepthMax = 64

const hex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)

/** The code unit of a `\uXXXX` escape starting at `i` (the backslash), or -1. */
const escapeAt = (text: string, i: number): number => {
  if (text.charCodeAt(i) !== 0x5c || text.charCodeAt(i + 1) !== 0x75) return -1
  for (let k = i + 2; k < i + 6; k++) if (!hex(text.charCodeAt(k))) return -1
  return parseInt(text.slice(i + 2, i + 6), 16)
}

const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff
const isLow = (u: number) => u >= 0xdc00 && u <= 0xdfff

/** Why a JSON body is refused, or undefined. Syntax errors are left to the parser. */
export const refusedJson = (text: string): string | undefined => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0) return "The body contains a NUL character."
    if (isHigh(c) ? !isLow(text.charCodeAt(i + 1)) : isLow(c) && !isHigh(text.charCodeAt(i - 1))) return "The body contains an unpaired UTF-16 surrogate."
    if (inString) {
      if (c === 0x22) inString = false
      else if (c === 0x5c) {
        const unit = escapeAt(text, i)
        if (unit === 0) return "The body contains a NUL character (\\u0000)."
        if (isHigh(unit) && !isLow(escapeAt(text, i + 6))) return "The body contains an unpaired UTF-16 surrogate escape."
        if (isLow(unit) && !isHigh(escapeAt(text, i - 6))) return "The body contains an unpaired UTF-16 surrogate escape."
        i += unit >= 0 ? 5 : 1
      }
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > jsonDepthMax) return `The body is nested deeper than ${jsonDepthMax} levels.`
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return undefined
}

/** Why URL-encoded text (a path, a query, a form body) is refused, or undefined: a NUL as %00. */
export const refusedUrlText = (text: string): string | undefined =>
  text.includes("%00") || text.includes("\u0000") ? "NUL (%00) is not accepted in a path or parameter." : undefined
