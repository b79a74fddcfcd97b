// The token desk's listener (../shared/INTERFACES.md): `{error: {code, message}}` bodies, its key
// auth, partner webhooks, transparency and registries open to any origin with a fair-use ceiling.
import { Effect, Layer } from "effect"
import { DeskApi } from "../../../schemas/desk/api.ts"
import { AppConfig } from "../../platform/Config.ts"
import { decodeErrorShape } from "../../platform/http/errorBodyEdge.ts"
import { listener as serviceListener, sharedListenerOptions } from "../../platform/http/Listener.ts"
import { publicBaseUrl } from "../../platform/http/publicUrl.ts"
import { DeskConfig } from "../DeskConfig.ts"
import { deskEdge, deskHandlers, deskWebApp } from "./DeskHttp.ts"
import { Transparency } from "./Transparency.ts"

export const listener = Layer.unwrapEffect(Effect.map(Effect.all([AppConfig, DeskConfig, Transparency]), ([config, desk, transparency]) =>
  serviceListener({
    ...sharedListenerOptions(config),
    edge: deskEdge(
      { ipWeightPerMin: desk.deskIpWeightPerMin, publicIpWeightPerMin: desk.deskPublicIpWeightPerMin },
      { "partner-a": desk.webhookSecretPartnerA, "partner-b": desk.webhookSecretPartnerB },
      transparency
    ),
    api: DeskApi,
    handlers: deskHandlers,
    decodeError: decodeErrorShape,
    port: desk.deskHttpPort,
    portSetting: "SHARDLINE_DESK_HTTP_PORT",
    publicUrl: publicBaseUrl(desk.deskPublicUrl, config.httpHost, desk.deskHttpPort),
    openApiPaths: ["/openapi.json"],
    docsPath: "/api-docs",
    routes: deskWebApp
  })))
