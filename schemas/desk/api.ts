// The token desk's whole HTTP contract (its own listener, SHARDLINE_DESK_HTTP_PORT). OpenAPI 3.1
// is generated from this value.
import { HttpApi } from "@effect/platform"
import { withCommonErrors } from "../common/ErrorBody.ts"
import { Forbidden, Unauthorized } from "./errors.ts"
import { KeyGroup } from "./key.ts"
import { RegistryGroup, TransparencyGroup } from "./transparency.ts"
import { WebhookGroup } from "./webhooks.ts"
import { CallbacksGroup } from "./callbacks.ts"
import { CashoutGroup, OrderPollGroup, StablesGroup, WrapGroup } from "./cashout.ts"
import { RewardsGroup, WalletLinkGroup } from "./walletLink.ts"
import { apiDocumentation } from "../common/openApi.ts"
import { DeskAppGroup, DeskSessionGroup, DeskSignInGroup } from "./webApp.ts"

export const DeskApi = withCommonErrors(
  HttpApi.make("desk").add(TransparencyGroup).add(RegistryGroup).add(KeyGroup).add(WalletLinkGroup).add(RewardsGroup).add(CallbacksGroup).add(WebhookGroup).add(CashoutGroup).add(OrderPollGroup).add(StablesGroup).add(WrapGroup)
    .add(DeskSignInGroup).add(DeskSessionGroup).add(DeskAppGroup)
)
  .addError(Unauthorized)
  .addError(Forbidden)
  .annotateContext(apiDocumentation({
    title: "Shardline token desk API",
    server: "this node's token desk listener",
    description:
      "Reserve transparency, partner cash-out, dollar tokens, wrapping, wallet linking and rewards. Errors are `{\"error\": {\"code\", \"message\"}}` " +
      "with a snake_case code. Partner routes take the API key as `x-api-key` or `Authorization: Bearer <API_KEY>`; transparency routes need no key and allow any origin. " +
      "The web app's routes (/api/app/…) take the session of the wallet sign-in (/api/public/auth/…): Authorization: Bearer <session token> or the sl_desk_session cookie."
  }))
