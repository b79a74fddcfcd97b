// The listed markets. A symbol is BASE+QUOTE with no separator; "BASE_QUOTE", "BASE/QUOTE" and
// "BASE-QUOTE" are accepted as input (spec: Symbol). Markets are listed by the Market actor's
// issue; until then the list is empty and every symbol is unknown (-1121).
export interface MarketInfo {
  readonly symbol: string
  readonly baseAsset: string
  readonly quoteAsset: string
}

export const listedMarkets: ReadonlyArray<MarketInfo> = []

const bySymbol = new Map(listedMarkets.map((m) => [m.symbol, m]))

/** Normalises a symbol as the client wrote it; undefined when it is not listed. */
export const findMarket = (raw: string): MarketInfo | undefined => {
  const s = raw.trim().toUpperCase()
  const sep = /^([A-Z0-9]{2,12})[_/-]([A-Z0-9]{2,12})$/.exec(s)
  return bySymbol.get(sep ? sep[1]! + sep[2]! : s)
}
