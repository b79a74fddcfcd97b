// Validation of what callers hand the port. Each failure names the field and says what was
// expected, so it can be shown to an operator (or a user, for a payout address) as is.
import { Effect, Redacted } from "effect"
import { getAddress, isAddress, isHash, type Address, type Hash } from "viem"
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import { EvmInvalidInput, evmLimits } from "../EvmLedger.ts"

const MAX_UINT256 = 2n ** 256n - 1n
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"

const invalid = (field: string, value: unknown, message: string) =>
  new EvmInvalidInput({ field, value: typeof value === "string" ? value : String(value), message })

/** A 20-byte hex address; mixed case must carry a valid EIP-55 checksum (catches typos). */
export const parseAddress = (field: string, value: string): Effect.Effect<Address, EvmInvalidInput> => {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value)) {
    return Effect.fail(invalid(field, value, "expected 0x followed by 40 hex digits"))
  }
  if (!isAddress(value, { strict: true })) {
    return Effect.fail(invalid(field, value, "bad EIP-55 checksum (mixed case that does not match): mistyped?"))
  }
  return Effect.succeed(getAddress(value))
}

/** A recipient: a valid address that is not the zero address (tokens sent there are burnt). */
export const parseRecipient = (field: string, value: string): Effect.Effect<Address, EvmInvalidInput> =>
  Effect.flatMap(parseAddress(field, value), (a) =>
    a === ZERO_ADDRESS ? Effect.fail(invalid(field, value, "the zero address would burn the tokens")) : Effect.succeed(a))

export const parseHash = (field: string, value: string): Effect.Effect<Hash, EvmInvalidInput> =>
  typeof value === "string" && isHash(value)
    ? Effect.succeed(value.toLowerCase() as Hash)
    : Effect.fail(invalid(field, value, "expected 0x followed by 64 hex digits"))

export const parseAmount = (field: string, value: bigint): Effect.Effect<bigint, EvmInvalidInput> =>
  typeof value === "bigint" && value > 0n && value <= MAX_UINT256
    ? Effect.succeed(value)
    : Effect.fail(invalid(field, value, "expected a positive integer in the token's smallest unit, below 2^256"))

export const parseBlock = (field: string, value: bigint): Effect.Effect<bigint, EvmInvalidInput> =>
  typeof value === "bigint" && value >= 0n ? Effect.succeed(value) : Effect.fail(invalid(field, value, "expected a block number >= 0"))

export const parseMineCount = (value: number): Effect.Effect<number, EvmInvalidInput> =>
  Number.isInteger(value) && value >= 1 && value <= evmLimits.mineBlocksMax
    ? Effect.succeed(value)
    : Effect.fail(invalid("blocks", value, `expected an integer in 1..${evmLimits.mineBlocksMax}`))

/** One address or a list, each valid, at most `evmLimits.filterAddressesMax`. */
export const parseAddressList = (
  field: string,
  value: string | ReadonlyArray<string> | undefined
): Effect.Effect<ReadonlyArray<Address> | undefined, EvmInvalidInput> => {
  if (value === undefined) return Effect.succeed(undefined)
  const list = typeof value === "string" ? [value] : value
  if (list.length === 0) return Effect.fail(invalid(field, "[]", "an empty list matches nothing; omit the filter instead"))
  if (list.length > evmLimits.filterAddressesMax) {
    return Effect.fail(invalid(field, `${list.length} addresses`, `at most ${evmLimits.filterAddressesMax} addresses per filter`))
  }
  return Effect.forEach(list, (a) => parseAddress(field, a))
}

/** The hot wallet's signer. The key stays inside the returned account; errors never echo it. */
export const hotWalletAccount = (key: Redacted.Redacted<string>): Effect.Effect<PrivateKeyAccount, EvmInvalidInput> => {
  const raw = Redacted.value(key)
  if (!/^0x[0-9a-fA-F]{64}$/.test(raw)) {
    return Effect.fail(invalid("hotWalletKey", "<redacted>", "expected a 32-byte private key as 0x followed by 64 hex digits"))
  }
  return Effect.try({
    try: () => privateKeyToAccount(raw as Hash),
    catch: () => invalid("hotWalletKey", "<redacted>", "not a valid secp256k1 private key")
  })
}
