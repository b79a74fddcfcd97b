// Moderator pull (D) of a member-signed post (docs/social.md, "Member-signed stamps"): the service
// holds no key of the member's post address, so D is stamped from the service's own moderation
// address (system wallet `social-moderation`), naming the post's manifest CID; the suffix carries
// the author's #asset id, its number is the stamp's sequence on the moderation address. The
// address only ever stamps D, so a reader of the chain knows a D from it is the service's.
import { Effect } from "effect"
import { systemWallet } from "../../platform/ledger/SystemWallet.ts"
import { stamp } from "./Stamper.ts"

export const moderationWalletName = "social-moderation"

export const moderationStamp = (post: { readonly id: string }, account: { readonly address: string; readonly asset_id: string }, cid: string, owedId?: string) =>
  Effect.gen(function*() {
    const key = yield* systemWallet(moderationWalletName)
    return yield* stamp({ address: key.address, privateKey: key.privateKey, account: account.address, assetId: account.asset_id, postId: post.id, tag: "D", cid, ...(owedId === undefined ? {} : { owedId }) })
  })
