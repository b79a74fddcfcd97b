// Where the social service is reached from outside: sign-in QR callbacks, wallet-link URLs, origin.
import { Effect } from "effect"
import { AppConfig } from "../../platform/Config.ts"
import { publicUrls } from "../../platform/http/publicUrl.ts"
import { SocialConfig } from "../SocialConfig.ts"

/** `base`: the social listener's public base URL; `origin`: its scheme, host and port. */
export const socialUrls = Effect.map(Effect.all([AppConfig, SocialConfig]), ([app, social]) => publicUrls(social.socialPublicUrl, app.httpHost, social.socialHttpPort))
