// The social listener's wallet sign-in (spec: "Sign-in challenge", Authentication 2): the shared
// flow of schemas/common/signIn.ts with the social error shape and the sl_session cookie.
import { BadRequest, Conflict, Gone } from "../common/ErrorBody.ts"
import { signInGroup } from "../common/signIn.ts"
import { Forbidden, Unauthorized } from "./errors.ts"

export {
  CallbackAccepted, CallbackBody, CallbackMessage, ChallengeId, ExchangeBody, LoginEnvelope, loginType, SessionIssued, WalletChallenge, WalletStatus
} from "../common/signIn.ts"

export const SignInGroup = signInGroup({ badRequest: BadRequest, unauthorized: Unauthorized, conflict: Conflict, gone: Gone, forbidden: Forbidden }, "sl_session")
