// The social network's listener (../shared/INTERFACES.md): the desk's error shape, session auth,
// content uploads within the content limit, pages and embeds, health open to any origin.
import { Effect, Layer } from "effect"
import { SocialApi } from "../../../schemas/social/api.ts"
import { AppConfig } from "../../platform/Config.ts"
import { decodeErrorShape } from "../../platform/http/errorBodyEdge.ts"
import { listener as serviceListener, sharedListenerOptions } from "../../platform/http/Listener.ts"
import { publicBaseUrl } from "../../platform/http/publicUrl.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { socialEdge, socialHandlers, socialWebApp } from "./SocialHttp.ts"

export const listener = Layer.unwrapEffect(Effect.map(Effect.all([AppConfig, SocialConfig, ContentStore]), ([config, social, store]) =>
  serviceListener({
    ...sharedListenerOptions(config),
    edge: socialEdge(social.socialIpWeightPerMin, social.socialContentBytesMax, store),
    api: SocialApi,
    handlers: socialHandlers,
    decodeError: decodeErrorShape,
    port: social.socialHttpPort,
    portSetting: "SHARDLINE_SOCIAL_HTTP_PORT",
    publicUrl: publicBaseUrl(social.socialPublicUrl, config.httpHost, social.socialHttpPort),
    openApiPaths: ["/openapi.json"],
    docsPath: "/api-docs",
    routes: socialWebApp
  })))
