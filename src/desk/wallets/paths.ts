// Where every desk key sits in the desk's one HD tree (BIP-32 seed, BIP-44 layout), pure. The
// paths are part of the desk's contract with its operators (docs/desk.md, "Wallets"): change
// one and the vaults move.
//
//   m/44'/{coin}'/{account}'/0/{index}
//   coin:    SLIP-44 per chain: ledger 696969, btc 0, ltc 2, ethereum/base/bsc 60 (one EVM
//            account on every EVM chain, as EVM wallets do). Mainnet coin types on regtest too:
//            regtest's shared "1" would give BTC and LTC the same keys.
//   account: the role: 2 cold vault, 3 hot vault, 4 relayer (pays fees, relays), 5 deposits.
//            Account 1 is reserved: the issuer of the desk's Omni properties is the system
//            wallet "desk-issuer" (system_wallets, sealed the same way), because the ledger
//            devnet re-issues every registered property at start, and the platform does that.
//   index:   0 for the role wallets; for deposits the next value of one database sequence
//            (desk_deposit_index_seq), so no index, and no address, is handed out twice.
// Account 0 is left alone: m/44'/696969'/0'/0/0 is a customer wallet's signing key (spec).

export const deskChains = ["ledger", "btc", "ltc", "ethereum", "base", "bsc"] as const
export type DeskChain = (typeof deskChains)[number]

export const slip44: { readonly [C in DeskChain]: number } = { ledger: 696969, btc: 0, ltc: 2, ethereum: 60, base: 60, bsc: 60 }

export const deskRoles = { cold: 2, hot: 3, relayer: 4, deposits: 5 } as const
export type DeskRole = keyof typeof deskRoles

/** The role wallets every chain has. */
export const roleWallets = ["cold", "hot", "relayer"] as const

/** BIP-32 child indexes stop below 2^31. */
export const DEPOSIT_INDEX_MAX = 0x7fffffff

export const rolePath = (chain: DeskChain, role: DeskRole, index = 0): string => `m/44'/${slip44[chain]}'/${deskRoles[role]}'/0/${index}`

export const depositPath = (chain: DeskChain, index: number): string => rolePath(chain, "deposits", index)

export const isEvmChain = (chain: DeskChain): chain is "ethereum" | "base" | "bsc" => chain === "ethereum" || chain === "base" || chain === "bsc"
