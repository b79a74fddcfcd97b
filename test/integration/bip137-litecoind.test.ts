// Interop with a real node (litecoind -regtest, Litecoin prefix and version bytes): BIP-137 in
// both directions, watch-only derivation against the node's descriptors, and a gap-limit scan
// answered by scantxoutset. The same code runs with the ledger params; only the record changes.
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { unwrap } from "../../harness/either.ts"
import { convertAddress, p2pkhAddressOfPubkey } from "../../src/chain/address.ts"
import {
  accountFromSeed,
  CHANGE,
  convertXpub,
  deriveAddress,
  deriveAddresses,
  RECEIVE,
  signingKeyFromSeed,
  watchOnlyFromXpub,
  type Branch
} from "../../src/chain/keys.ts"
import { signMessage, verifyMessage } from "../../src/chain/message.ts"
import { ledgerParams, litecoinRegtestParams as regtest } from "../../src/chain/params.ts"
import { scanAccount, type AddressActivity } from "../../src/chain/xpubScan.ts"
import { startLitecoind, type Litecoind } from "../support/litecoind.ts"

const seed = Uint8Array.from({ length: 32 }, (_, i) => (i * 17 + 1) & 255)
const messages = ['{"member":"alice","nonce":"3f2a"}', "héllo ✓ 世界", "x".repeat(300)] // 300: multi-byte varint

let node: Litecoind
beforeAll(async () => {
  node = await startLitecoind()
})
afterAll(async () => {
  await node?.stop()
})

describe("BIP-137 against litecoind", () => {
  it("verifies signatures made by signmessagewithprivkey (compressed and uncompressed keys)", async () => {
    const key = unwrap(signingKeyFromSeed(seed, regtest))
    const uncompressed = ECPairFactory(ecc).fromPrivateKey(key.privateKey, { compressed: false, network: regtest.network })
    const uncompressedAddress = unwrap(p2pkhAddressOfPubkey(uncompressed.publicKey, regtest))
    for (const message of messages) {
      const sig = await node.rpc<string>("signmessagewithprivkey", key.wif, message)
      expect(Buffer.from(sig, "base64")[0]).toBeGreaterThanOrEqual(31)
      expect(verifyMessage({ address: key.address, signature: sig, message }, regtest)).toMatchObject({ valid: true, addressKind: "p2pkh" })
      expect(verifyMessage({ address: key.address, signature: sig, message: message + "." }, regtest).valid).toBe(false)
      // Our prefix and version bytes are not Litecoin's.
      const asLedger = unwrap(convertAddress(key.address, regtest, ledgerParams))
      expect(verifyMessage({ address: asLedger, signature: sig, message }).valid).toBe(false)

      const usig = await node.rpc<string>("signmessagewithprivkey", uncompressed.toWIF(), message)
      expect(Buffer.from(usig, "base64")[0]).toBeLessThanOrEqual(30)
      expect(verifyMessage({ address: uncompressedAddress, signature: usig, message }, regtest).valid).toBe(true)
      expect(verifyMessage({ address: key.address, signature: usig, message }, regtest).valid).toBe(false)
    }
  })

  it("our signatures pass verifymessage; tampered ones do not", async () => {
    const key = unwrap(signingKeyFromSeed(seed, regtest))
    for (const message of messages) {
      const sig = unwrap(signMessage(message, key.privateKey, regtest))
      expect(await node.rpc<boolean>("verifymessage", key.address, sig, message)).toBe(true)
      expect(await node.rpc<boolean>("verifymessage", key.address, sig, message + "!")).toBe(false)
      // Signed with the ledger prefix: the node must refuse it.
      const ledgerSig = unwrap(signMessage(message, key.privateKey, ledgerParams))
      expect(await node.rpc<boolean>("verifymessage", key.address, ledgerSig, message)).toBe(false)
    }
    const uncompressed = unwrap(signMessage(messages[0]!, key.privateKey, regtest, { compressed: false }))
    const pub = ECPairFactory(ecc).fromPrivateKey(key.privateKey, { compressed: false }).publicKey
    expect(await node.rpc<boolean>("verifymessage", unwrap(p2pkhAddressOfPubkey(pub, regtest)), uncompressed, messages[0])).toBe(true)
  })

  it("the ledger signing key, converted at the edge, is the same key to the node", async () => {
    const ledgerKey = unwrap(signingKeyFromSeed(seed))
    const nodeAddress = unwrap(convertAddress(ledgerKey.address, ledgerParams, regtest))
    const sig = unwrap(signMessage("edge", ledgerKey.privateKey, regtest))
    expect(await node.rpc<boolean>("verifymessage", nodeAddress, sig, "edge")).toBe(true)
  })
})

describe("watch-only xpub against litecoind descriptors", () => {
  const account = unwrap(accountFromSeed(seed))
  const tpub = unwrap(convertXpub(account.watch.xpub, ledgerParams, regtest))
  const regtestWatch = unwrap(watchOnlyFromXpub(tpub, regtest))

  const descriptor = async (body: string): Promise<string> =>
    (await node.rpc<{ descriptor: string }>("getdescriptorinfo", body)).descriptor

  it("deriveaddresses over pkh(tpub/0/*) and /1/* equals our 20 addresses per branch", async () => {
    for (const branch of [RECEIVE, CHANGE] as const) {
      const fromNode = await node.rpc<Array<string>>("deriveaddresses", await descriptor(`pkh(${tpub}/${branch}/*)`), [0, 19])
      const ours = unwrap(deriveAddresses(regtestWatch, branch, 0, 20)).map((d) => d.address)
      expect(ours).toEqual(fromNode)
      // And the ledger-side addresses are the same hash160s.
      const ledgerSide = unwrap(deriveAddresses(account.watch, branch, 0, 20)).map((d) => unwrap(convertAddress(d.address, ledgerParams, regtest)))
      expect(ledgerSide).toEqual(fromNode)
    }
  })

  it("a gap-limit scan answered by scantxoutset finds index 19 and not index 40 after it", async () => {
    const mineTo = async (branch: Branch, index: number) => {
      const ledgerAddress = unwrap(deriveAddress(account.watch, branch, index)).address
      await node.rpc("generatetoaddress", 1, unwrap(convertAddress(ledgerAddress, ledgerParams, regtest)))
    }
    await mineTo(RECEIVE, 19)
    await mineTo(CHANGE, 19)
    await mineTo(CHANGE, 40)
    // The port function: ledger addresses in, node queried in its own format (the adapter edge).
    const lookup = async (addresses: ReadonlyArray<string>): Promise<ReadonlyMap<string, AddressActivity>> => {
      const nodeAddresses = addresses.map((a) => unwrap(convertAddress(a, ledgerParams, regtest)))
      const res = await node.rpc<{ unspents: Array<{ desc: string; amount: number }> }>(
        "scantxoutset", "start", nodeAddresses.map((a) => `addr(${a})`)
      )
      return new Map(addresses.map((a, i) => {
        const sats = res.unspents
          .filter((u) => u.desc.includes(`addr(${nodeAddresses[i]})`))
          .reduce((sum, u) => sum + BigInt(Math.round(u.amount * 1e8)), 0n)
        return [a, { used: sats > 0n, balance: sats }]
      }))
    }
    const scan = unwrap(await scanAccount(account.watch, lookup))
    expect(scan.receive.used.map((a) => a.index)).toEqual([19])
    expect(scan.change.used.map((a) => a.index)).toEqual([19])
    expect(scan.receive.balance).toBe(50n * 100_000_000n) // regtest subsidy before the first halving
    expect(scan.balance).toBe(100n * 100_000_000n) // the coinbase at change index 40 is beyond the gap
  })
})
