// Symbol input forms (spec: Symbol): a market is BASE+QUOTE with no separator; "BASE_QUOTE",
// "BASE/QUOTE" and "BASE-QUOTE" are accepted as input, in any case.
/** The canonical symbol a client's spelling stands for (not checked against the listed markets). */
export const normalizeSymbol = (raw: string): string => {
  const s = raw.trim().toUpperCase()
  const sep = /^([A-Z0-9]{2,12})[_/-]([A-Z0-9]{2,12})$/.exec(s)
  return sep ? sep[1]! + sep[2]! : s
}
