// Where the desk is reached from outside: the link URLs a QR holds and the manifest's `from`.
import { Effect } from "effect"
import { AppConfig } from "../../platform/Config.ts"
import { publicUrls } from "../../platform/http/publicUrl.ts"
import { DeskConfig } from "../DeskConfig.ts"

/** `base`: the desk's public base URL; `origin`: the manifest's `from` (scheme, host, port). */
export const deskUrls = Effect.map(Effect.all([AppConfig, DeskConfig]), ([app, desk]) => publicUrls(desk.deskPublicUrl, app.httpHost, desk.deskHttpPort))
