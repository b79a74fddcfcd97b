// An author's timeline from the chain alone (beyond the spec; docs/social.md, "Timeline"): the
// post addresses are derived from the account's xpub (m/…/1101'/{i}/0/0, gap limit 20) and, with
// the identity address, asked for their unspent coins; each address's stamps form one chain
// (every stamp spends the previous one's change), walked back from its coin with getTx, and
// every OP_RETURN on the way is decoded. Nothing is read from the service's own tables. Only
// confirmed coins are listed by the ledger port, so stamps still in the mempool appear once mined.
import { Transaction, payments } from "bitcoinjs-lib"
import { Effect, Either } from "effect"
import { addressBelow, watchOnlyFromXpub } from "../../chain/keys.ts"
import { type UtxoLedgerShape, ledgerLimits } from "../../chain/ledger/UtxoLedger.ts"
import { postPath, postSteps } from "../accounts/socialKeys.ts"
import { decodeStamp, suffixOf } from "./opReturn.ts"

/** Consecutive unused post addresses after which the scan stops (BIP-44's gap limit). */
export const gapLimit = 20
/** Post addresses scanned at most per timeline. */
export const postAddressesMax = 2_000
/** Stamps walked back per address at most. */
export const stampsPerAddressMax = 1_000

export interface TimelineEvent {
  readonly txid: string
  readonly tag: string
  readonly cid: string
  readonly suffix: string
  readonly assetId: string
  readonly seq: number
  readonly address: string
  readonly derivationPath: string
  readonly blockHeight: number
  readonly confirmations: number
}

const opReturnData = (tx: Transaction): Uint8Array | undefined => {
  for (const out of tx.outs) {
    if (out.script[0] !== 0x6a) continue
    try {
      return payments.embed({ output: out.script }).data?.[0]
    } catch {
      return undefined
    }
  }
  return undefined
}

/** Walks one address's stamp chain back from its unspent coin. */
const walk = (ledger: UtxoLedgerShape, address: string, path: string, tipTxid: string) =>
  Effect.gen(function*() {
    const events: Array<TimelineEvent> = []
    let txid: string | undefined = tipTxid
    for (let i = 0; txid !== undefined && i < stampsPerAddressMax; i++) {
      const found = yield* ledger.getTx(txid)
      const tx = Transaction.fromHex(found.hex)
      const data = opReturnData(tx)
      const stamp = data === undefined ? undefined : Either.getOrUndefined(decodeStamp(data))
      // The funding transaction (no stamp) starts the chain.
      if (stamp === undefined) break
      events.push({
        txid, tag: stamp.tag, cid: stamp.cid, suffix: suffixOf(stamp.assetId, stamp.seq), assetId: stamp.assetId, seq: stamp.seq,
        address, derivationPath: path, blockHeight: found.blockHeight ?? -1, confirmations: found.confirmations
      })
      txid = tx.ins[0] === undefined ? undefined : Buffer.from(tx.ins[0].hash).reverse().toString("hex")
    }
    return events
  })

export const rebuildTimeline = (ledger: UtxoLedgerShape, identityAddress: string, xpub: string) =>
  Effect.gen(function*() {
    const watch = watchOnlyFromXpub(xpub, ledger.params)
    if (Either.isLeft(watch)) return yield* Effect.fail({ _tag: "BadXpub" as const, message: watch.left.message })
    const addresses: Array<{ address: string; path: string }> = [{ address: identityAddress, path: "m/44'/696969'/0'/0/0" }]
    const events: Array<TimelineEvent> = []
    let lastUsed = -1
    let scanned = 0
    const batch = ledgerLimits.listUnspentOwnersMax - 1
    for (let from = 0; from < postAddressesMax && from <= lastUsed + gapLimit; from += batch) {
      const group = [...(from === 0 ? addresses : [])]
      for (let i = from; i < from + batch; i++) group.push({ address: Either.getOrThrow(addressBelow(watch.right, postSteps(i))), path: postPath(i) })
      scanned += group.length
      const coins = yield* ledger.listUnspent(group.map((g) => g.address))
      for (const [n, g] of group.entries()) {
        const own = coins.filter((c) => Either.getOrUndefined(decodeAddress(c.script, ledger)) === g.address)
        if (own.length === 0) continue
        const index = from === 0 ? n - 1 : n
        if (index >= 0) lastUsed = Math.max(lastUsed, from + index)
        const seen = new Set<string>()
        for (const coin of own) {
          for (const e of yield* walk(ledger, g.address, g.path, coin.txid)) {
            if (!seen.has(e.txid)) events.push(e)
            seen.add(e.txid)
          }
        }
      }
    }
    events.sort((a, b) => a.blockHeight - b.blockHeight || a.address.localeCompare(b.address) || a.seq - b.seq)
    return { events, addressesScanned: scanned }
  })

const decodeAddress = (script: Uint8Array, ledger: UtxoLedgerShape): Either.Either<string, unknown> =>
  Either.try(() => payments.p2pkh({ output: script, network: ledger.params.network }).address!)
