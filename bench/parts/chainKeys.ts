// Key-layer figures for `npm run bench -- chain` (bench/chain.ts prints and writes them):
// addresses derived per second from a watch-only xpub (both branches, as a gap scan does) and
// BIP-137 verifications per second (address check + recovery, as wallet linking does).
import { unwrap } from "../../harness/either.ts"
import { accountFromSeed, CHANGE, deriveAddress, RECEIVE } from "../../src/chain/keys.ts"
import { signMessage, verifyMessage } from "../../src/chain/message.ts"
import { ledgerParams } from "../../src/chain/params.ts"

/** Work per measurement; enough for a stable rate, small enough to keep the bench short. */
const DERIVATIONS = 2_000
const VERIFICATIONS = 2_000
const WARMUP = 50

const perSecond = (count: number, ms: number): number => Math.round((count * 1000) / Math.max(ms, 1e-3))


const time = (n: number, step: (i: number) => void): number => {
  for (let i = 0; i < WARMUP; i++) step(i)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) step(i)
  return perSecond(n, performance.now() - t0)
}

export const measureKeys = async (): Promise<Array<{ metric: string; perSecond: number }>> => {
  const account = unwrap(accountFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i), ledgerParams))
  const watch = account.watch
  const derive = time(DERIVATIONS, (i) => {
    unwrap(deriveAddress(watch, i % 2 === 0 ? RECEIVE : CHANGE, WARMUP + i))
  })

  const key = unwrap(deriveAddress(watch, RECEIVE, 0))
  const signer = account.account.derive(RECEIVE).derive(0)
  const message = '{"member":"bench","nonce":"0001","xpub":"' + watch.xpub + '"}'
  const signature = unwrap(signMessage(message, signer.privateKey ?? new Uint8Array(32), ledgerParams))
  const verify = time(VERIFICATIONS, () => {
    if (!verifyMessage({ address: key.address, signature, message }).valid) throw new Error("bench signature did not verify")
  })

  return [
    { metric: "addresses derived (watch-only xpub)", perSecond: derive },
    { metric: "BIP-137 verifications", perSecond: verify }
  ]
}
