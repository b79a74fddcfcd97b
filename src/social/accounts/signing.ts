// Who signs an account's stamps: the service (a sealed seed, `social account create`) or the
// member's own wallet (linked by xpub only; docs/social.md, "Member-signed stamps"). Pure.

/** An account the service holds no key for: its stamps are signed by the member. */
export const memberSigns = (account: { readonly seed_enc: string | null }): boolean => account.seed_enc === null
