// A minimal Binance-style signed client for tests: the same bytes a real client sends.
import { sign } from "../src/exchange/auth/signature.ts"

export interface Key {
  readonly apiKey: string
  readonly secretKey: string
}

export const signedQuery = (key: Key, params: Record<string, string | number>, now = Date.now()) => {
  const q = new URLSearchParams(Object.entries({ ...params, timestamp: params.timestamp ?? now }).map(([k, v]): [string, string] => [k, String(v)])).toString()
  return `${q}&signature=${sign(key.secretKey, q)}`
}

export const signedGet = (baseUrl: string, path: string, key: Key, params: Record<string, string | number> = {}, headers: Record<string, string> = {}) =>
  fetch(`${baseUrl}${path}?${signedQuery(key, params)}`, { headers: { "X-MBX-APIKEY": key.apiKey, ...headers } })
