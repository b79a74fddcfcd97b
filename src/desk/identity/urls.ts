// Where the desk is reached from outside: the link URLs a QR holds and the manifest's `from`.
import type { AppConfigShape } from "../../platform/Config.ts"
import { publicBaseUrl } from "../../platform/http/publicUrl.ts"

export const deskBaseUrl = (config: AppConfigShape): string => publicBaseUrl(config.deskPublicUrl, config.httpHost, config.deskHttpPort)

/** The manifest's `from`: the desk's origin (scheme, host, port). */
export const deskOrigin = (config: AppConfigShape): string => new URL(deskBaseUrl(config)).origin
