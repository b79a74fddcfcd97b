// BIP-32/44 keys for the ledger: an account from a seed (signing side) or from an
// account-level xpub (watch-only side, what a linked wallet hands us). Pure: every function
// returns an Either; bip32's throws (bad checksum, wrong network, invalid child) stay inside.
import { BIP32Factory, type BIP32Interface } from "bip32"
import bs58check from "bs58check"
import { Data, Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { p2pkhAddressOfPubkey } from "./address.ts"
import { ledgerParams, type UtxoChainParams } from "./params.ts"

// tiny-secp256k1 (wasm) over @bitcoinerlab/secp256k1: about 4× faster derivation here
// (notes/chains-brief.md §2).
const bip32 = BIP32Factory(ecc)

export const RECEIVE = 0
export const CHANGE = 1
export type Branch = typeof RECEIVE | typeof CHANGE

/** BIP-32 refuses seeds outside 16..64 bytes. */
export const SEED_BYTES_MIN = 16
export const SEED_BYTES_MAX = 64
/** Non-hardened child indexes: 0 .. 2^31 - 1. */
export const CHILD_INDEX_MAX = 0x7fffffff
/** An account-level key sits at m/44'/coin'/account': depth 3. */
const ACCOUNT_DEPTH = 3

export const accountPath = (params: UtxoChainParams = ledgerParams, account = 0): string =>
  `m/44'/${params.coinType}'/${account}'`

export const addressPath = (branch: Branch, index: number, params: UtxoChainParams = ledgerParams): string =>
  `${accountPath(params)}/${branch}/${index}`

/** The wallet-link signing key: m/44'/696969'/0'/0/0 on the ledger. */
export const signingKeyPath = (params: UtxoChainParams = ledgerParams): string => addressPath(RECEIVE, 0, params)

export interface DerivedAddress {
  readonly branch: Branch
  readonly index: number
  readonly path: string
  readonly publicKey: Uint8Array
  readonly address: string
}

export interface SigningKey extends DerivedAddress {
  readonly privateKey: Uint8Array
  /** Wallet import format under the params' wif byte (what litecoind's signmessagewithprivkey takes). */
  readonly wif: string
}

/** Watch-only account: derives addresses, never holds a private key. */
export interface WatchOnlyAccount {
  readonly params: UtxoChainParams
  /** Account-level extended public key under the params' bip32 version bytes. */
  readonly xpub: string
  /** Branch nodes m/…/0 and m/…/1, derived once: address derivation is then one step. */
  readonly branches: readonly [BIP32Interface, BIP32Interface]
}

export interface SeedAccount {
  readonly watch: WatchOnlyAccount
  readonly account: BIP32Interface
}

/** A seed, xpub, index or derivation this module refuses; `message` is for a person. */
export class KeyError extends Data.TaggedError("KeyError")<{ readonly message: string }> {}

type Keyed<A> = Either.Either<A, KeyError>
const ok = <A>(value: A): Keyed<A> => Either.right(value)
const fail = <A>(message: string): Keyed<A> => Either.left(new KeyError({ message }))
/** A derived key always has a valid public key; the address error is re-tagged, not expected. */
const addressOf = (publicKey: Uint8Array, params: UtxoChainParams): Keyed<string> =>
  Either.mapLeft(p2pkhAddressOfPubkey(publicKey, params), (e) => new KeyError({ message: e.message }))
const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const isChildIndex = (index: number): boolean => Number.isInteger(index) && index >= 0 && index <= CHILD_INDEX_MAX

const watchOf = (node: BIP32Interface, params: UtxoChainParams): WatchOnlyAccount => {
  const neutered = node.neutered()
  return { params, xpub: neutered.toBase58(), branches: [neutered.derive(RECEIVE), neutered.derive(CHANGE)] }
}

/** The node at `path` ("m/0'/1") from a BIP-32 seed: the one derivation every seed-side key goes through. */
const nodeAt = (seed: Uint8Array, path: string, params: UtxoChainParams): Keyed<BIP32Interface> => {
  if (seed.length < SEED_BYTES_MIN || seed.length > SEED_BYTES_MAX) {
    return fail(`seed must be ${SEED_BYTES_MIN} to ${SEED_BYTES_MAX} bytes, got ${seed.length}`)
  }
  try {
    const master = bip32.fromSeed(seed, params.network)
    return ok(path === "m" ? master : master.derivePath(path))
  } catch (e) {
    return fail(`cannot derive ${path} from this seed: ${message(e)}`)
  }
}

/** Account m/44'/coin'/0' from a BIP-32 seed (16–64 bytes, e.g. a BIP-39 seed). */
export const accountFromSeed = (seed: Uint8Array, params: UtxoChainParams = ledgerParams): Keyed<SeedAccount> =>
  Either.map(nodeAt(seed, accountPath(params), params), (account) => ({ account, watch: watchOf(account, params) }))

/**
 * Extended keys at any path from a seed, under the params' version bytes. For tooling and for
 * checking our derivation against BIP-32's published test vectors (test/unit/chain-keys).
 */
export const extendedKeysAt = (
  seed: Uint8Array,
  path: string,
  params: UtxoChainParams = ledgerParams
): Keyed<{ readonly xpub: string; readonly xprv: string }> =>
  Either.map(nodeAt(seed, path, params), (node) => ({ xpub: node.neutered().toBase58(), xprv: node.toBase58() }))

/** The key pair at any hardened or plain path from a seed (a service's own HD tree: the desk's vaults and deposits). */
export const keyPairAt = (
  seed: Uint8Array,
  path: string,
  params: UtxoChainParams = ledgerParams
): Keyed<{ readonly publicKey: Uint8Array; readonly privateKey: Uint8Array }> =>
  Either.flatMap(nodeAt(seed, path, params), (node) =>
    node.privateKey === undefined ? fail(`${path}: no private key`) : ok({ publicKey: new Uint8Array(node.publicKey), privateKey: new Uint8Array(node.privateKey) }))

/**
 * Watch-only account from an account-level xpub (depth 3, e.g. "Tpub…" for the ledger). A
 * private extended key is refused rather than silently neutered: nobody should paste one.
 */
export const watchOnlyFromXpub = (xpub: string, params: UtxoChainParams = ledgerParams): Keyed<WatchOnlyAccount> => {
  const raw = bs58check.decodeUnsafe(xpub.trim())
  if (raw === undefined) return fail("extended public key is not valid base58check (mistyped or truncated?)")
  if (raw.length !== 78) return fail(`extended public key decodes to ${raw.length} bytes, expected 78`)
  const version = new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getUint32(0)
  if (version === params.network.bip32.private) {
    return fail("this is an extended private key; share the account's extended public key instead")
  }
  if (version !== params.network.bip32.public) {
    return fail(
      `extended key version 0x${version.toString(16).padStart(8, "0")} is not a ${params.name} xpub ` +
        `(expected 0x${params.network.bip32.public.toString(16).padStart(8, "0")})`
    )
  }
  if (raw[4] !== ACCOUNT_DEPTH) {
    return fail(`expected an account-level xpub (depth 3, ${accountPath(params)}), got depth ${raw[4]}`)
  }
  try {
    return ok(watchOf(bip32.fromBase58(xpub.trim(), params.network), params))
  } catch (e) {
    return fail(`invalid extended public key: ${message(e)}`)
  }
}

/**
 * The same account key under another param set's bip32 version bytes, e.g. a ledger "Tpub…"
 * as a regtest "tpub…" for litecoind descriptors. Adapter edges only.
 */
export const convertXpub = (xpub: string, from: UtxoChainParams, to: UtxoChainParams): Keyed<string> => {
  const watch = watchOnlyFromXpub(xpub, from)
  if (Either.isLeft(watch)) return Either.left(watch.left)
  const raw = Uint8Array.from(bs58check.decode(watch.right.xpub))
  new DataView(raw.buffer).setUint32(0, to.network.bip32.public)
  return ok(bs58check.encode(raw))
}

/** P2PKH address at m/44'/coin'/0'/branch/index. */
export const deriveAddress = (watch: WatchOnlyAccount, branch: Branch, index: number): Keyed<DerivedAddress> => {
  if (!isChildIndex(index)) return fail(`address index must be an integer from 0 to ${CHILD_INDEX_MAX}, got ${index}`)
  try {
    const publicKey = watch.branches[branch].derive(index).publicKey
    return Either.map(addressOf(publicKey, watch.params), (address) => ({
      branch,
      index,
      path: addressPath(branch, index, watch.params),
      publicKey,
      address
    }))
  } catch (e) {
    // BIP-32: an index whose child key is invalid (probability < 2^-127) must be skipped.
    return fail(`cannot derive ${addressPath(branch, index, watch.params)}: ${message(e)}`)
  }
}

/** `count` consecutive addresses from `from` on one branch. */
export const deriveAddresses = (
  watch: WatchOnlyAccount,
  branch: Branch,
  from: number,
  count: number
): Keyed<ReadonlyArray<DerivedAddress>> => {
  if (!Number.isInteger(count) || count < 0) return fail(`count must be a non-negative integer, got ${count}`)
  if (count > 0 && !isChildIndex(from + count - 1)) return fail(`address indexes ${from}..${from + count - 1} are out of range`)
  const out: Array<DerivedAddress> = []
  for (let i = from; i < from + count; i++) {
    const d = deriveAddress(watch, branch, i)
    if (Either.isLeft(d)) return Either.left(d.left)
    out.push(d.right)
  }
  return ok(out)
}

/** Private key at m/44'/coin'/0'/branch/index (for signing transactions or messages). */
export const deriveSigningKey = (seed: SeedAccount, branch: Branch, index: number): Keyed<SigningKey> => {
  if (!isChildIndex(index)) return fail(`address index must be an integer from 0 to ${CHILD_INDEX_MAX}, got ${index}`)
  const params = seed.watch.params
  try {
    const node = seed.account.derive(branch).derive(index)
    const privateKey = node.privateKey
    if (privateKey === undefined) return fail("account has no private key")
    return Either.map(addressOf(node.publicKey, params), (address) => ({
      branch,
      index,
      path: addressPath(branch, index, params),
      publicKey: node.publicKey,
      privateKey,
      wif: node.toWIF(),
      address
    }))
  } catch (e) {
    return fail(`cannot derive ${addressPath(branch, index, params)}: ${message(e)}`)
  }
}

/** The wallet-link key at m/44'/696969'/0'/0/0. */
export const signingKeyFromSeed = (seed: Uint8Array, params: UtxoChainParams = ledgerParams): Keyed<SigningKey> => {
  const account = accountFromSeed(seed, params)
  return Either.flatMap(account, (a) => deriveSigningKey(a, RECEIVE, 0))
}

/** Whether `address` is one of the first `limit` addresses of either branch (desk: signer ↔ xpub). */
export const findAddress = (
  watch: WatchOnlyAccount,
  address: string,
  limit: number
): Keyed<DerivedAddress | undefined> => {
  for (let index = 0; index < limit; index++) {
    for (const branch of [RECEIVE, CHANGE] as const) {
      const d = deriveAddress(watch, branch, index)
      if (Either.isLeft(d)) return Either.left(d.left)
      if (d.right.address === address) return ok(d.right)
    }
  }
  return ok(undefined)
}

/** The key at any path from a seed (social activity: m/44'/696969'/1101'/{post index}/0/0). */
export const signingKeyAt = (seed: Uint8Array, path: string, params: UtxoChainParams = ledgerParams): Keyed<Omit<SigningKey, "branch" | "index">> =>
  Either.flatMap(nodeAt(seed, path, params), (node) => {
    const privateKey = node.privateKey
    if (privateKey === undefined) return fail("the derived node has no private key")
    return Either.map(addressOf(node.publicKey, params), (address) => ({ path, publicKey: node.publicKey, privateKey, wif: node.toWIF(), address }))
  })

/** The address `relative` non-hardened steps below an account-level xpub ([post index, 0, 0]). */
export const addressBelow = (watch: WatchOnlyAccount, relative: ReadonlyArray<number>): Keyed<string> => {
  if (!relative.every(isChildIndex)) return fail(`child indexes must be integers from 0 to ${CHILD_INDEX_MAX}`)
  try {
    // branches[0] is the account's child 0: derive from the account node itself for other first steps.
    const account = bip32.fromBase58(watch.xpub, watch.params.network)
    const node = relative.reduce((n, i) => n.derive(i), account)
    return addressOf(node.publicKey, watch.params)
  } catch (e) {
    return fail(`cannot derive below the account: ${message(e)}`)
  }
}
