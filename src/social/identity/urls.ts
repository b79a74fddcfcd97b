// Where the social service is reached from outside: sign-in QR callbacks, wallet-link URLs, origin.
import type { AppConfigShape } from "../../platform/Config.ts"
import { publicBaseUrl } from "../../platform/http/publicUrl.ts"

export const socialBaseUrl = (config: AppConfigShape): string => publicBaseUrl(config.socialPublicUrl, config.httpHost, config.socialHttpPort)

export const socialOrigin = (config: AppConfigShape): string => new URL(socialBaseUrl(config)).origin
