// The social network's whole HTTP contract (its own listener, SHARDLINE_SOCIAL_HTTP_PORT).
// OpenAPI 3.1 is generated from this value.
import { HttpApi } from "@effect/platform"
import { withCommonErrors } from "../common/ErrorBody.ts"
import { Unauthorized } from "./errors.ts"
import { HealthGroup } from "./health.ts"
import { SessionGroup } from "./session.ts"
import { SignInGroup } from "./signin.ts"
import { SocialLinkGroup } from "./walletLink.ts"
import { ComposerGroup, PagesGroup, PublicContentGroup } from "./content.ts"
import { MemberSignedGroup, StampSigningGroup } from "./memberSigned.ts"
import { MeGroup } from "./me.ts"
import { apiDocumentation } from "../common/openApi.ts"

export const SocialApi = withCommonErrors(
  HttpApi.make("social").add(HealthGroup).add(SessionGroup).add(MeGroup).add(SignInGroup).add(SocialLinkGroup).add(ComposerGroup).add(MemberSignedGroup).add(StampSigningGroup).add(PublicContentGroup).add(PagesGroup)
)
  .addError(Unauthorized)
  .annotateContext(apiDocumentation({
    title: "Shardline social API",
    server: "this node's social listener",
    description:
      "Content by CID, embeds, wallet sign-in and verification. Errors are `{\"error\": {\"code\", \"message\"}}` with a snake_case code. " +
      "Reading needs no key; session routes take Authorization: Bearer <session token> or the sl_session cookie that wallet-exchange sets."
  }))
