// Routes any web page may read (desk transparency, social health: "cross-origin reads from any
// origin"): a middleware on their group adds `Access-Control-Allow-Origin: *` to the answer,
// errors included. Declared here because two services use it; implemented in
// src/platform/http/openCors.ts. Authenticated routes never carry it.
import { HttpApiMiddleware } from "@effect/platform"

export class OpenCors extends HttpApiMiddleware.Tag<OpenCors>()("shardline/http/OpenCors") {}
