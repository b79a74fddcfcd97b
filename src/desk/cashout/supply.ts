// A dollar token's circulating supply: granted minus revoked, less what sits at the issuer's own
// address (tokens swept back and not yet revoked are not in circulation).
import { Effect } from "effect"
import type { OmniProperty } from "../../chain/omni/indexer.ts"
import type { OmniViewShape } from "../../platform/ledger/OmniView.ts"

export const circulating = (omni: OmniViewShape, propertyId: number, property: OmniProperty) =>
  Effect.map(omni.balance(property.issuer, propertyId), (atIssuer) => property.totalTokens - atIssuer)
