// Where the desk is reached from outside: the link URLs a QR holds and the manifest's `from`.
import { Option } from "effect"
import type { AppConfigShape } from "../../platform/Config.ts"

export const deskBaseUrl = (config: AppConfigShape): string =>
  Option.getOrElse(config.deskPublicUrl, () => `http://${config.httpHost}:${config.deskHttpPort}`)

/** The manifest's `from`: the desk's origin (scheme, host, port). */
export const deskOrigin = (config: AppConfigShape): string => new URL(deskBaseUrl(config)).origin
