// `desk verify --url`: checks a desk's whole attestation series from its public endpoints
// alone: every row of /api/public/reserves/history?range=all (hashes, the chain, the Ed25519
// signatures with the key /api/public/status publishes, or the one given) and every missing
// hour up to now; the HMAC signatures too when the verifier holds the issuer's key.
import { Schema } from "effect"
import { DeskStatus, HistoryBody } from "../../../schemas/desk/transparency.ts"
import { fetchProblem } from "../../platform/http/fetchProblem.ts"
import { type AttestationPoint, verifySeries, type VerifyResult } from "./attestation.ts"

/** Per request. */
export const verifyTimeoutMs = 30_000

export interface VerifyDeskOptions {
  readonly url: string
  /** Pin the Ed25519 key instead of trusting the one the desk publishes. */
  readonly publicKey?: string
  readonly hmacKey?: string
  readonly nowMs?: number
}

const getJson = async (url: string): Promise<unknown> => {
  const res = await fetch(url, { signal: AbortSignal.timeout(verifyTimeoutMs), headers: { accept: "application/json" } }).catch((e: unknown) => {
    throw new Error(`${url}: ${fetchProblem(e)}`)
  })
  if (!res.ok) throw new Error(`${url} answered ${res.status}`)
  return res.json()
}

/** The verdict, or one line saying why the series could not be read. */
export const verifyDesk = async (options: VerifyDeskOptions): Promise<(VerifyResult & { readonly publicKey: string }) | string> => {
  const base = options.url.replace(/\/+$/, "")
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) return `--url ${options.url} is not an http(s) URL`
  try {
    const [history, status] = await Promise.all([getJson(`${base}/api/public/reserves/history?range=all`), getJson(`${base}/api/public/status`)])
    const points = Schema.decodeUnknownSync(HistoryBody)(history).points as ReadonlyArray<AttestationPoint>
    const publicKey = options.publicKey ?? Schema.decodeUnknownSync(DeskStatus)(status).attestationPublicKey
    const result = verifySeries(points, { publicKey, nowMs: options.nowMs ?? Date.now(), ...(options.hmacKey === undefined ? {} : { hmacKey: options.hmacKey }) })
    return { ...result, publicKey }
  } catch (e) {
    return `cannot read the attestations of ${base}: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`
  }
}
