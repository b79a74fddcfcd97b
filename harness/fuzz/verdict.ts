// What every answer must be, whatever was sent (issue 27, "Done when"): an answer (no hang, no cut
// response, no silent close), never a 5xx, never a stack trace, and every error body in the
// listener's own shape: exchange `{code, msg}` (a negative integer and a string), desk and social
// `{error: {code, message}}` (snake_case and a string). A success of a JSON route is JSON; the
// routes documented as pages, scripts, media, metrics text or event streams are exempt from that
// (operations.ts nonJsonSuccess), and so is a ranged read's documented empty 416.
import type { FuzzRequest } from "./generate.ts"
import { nonJsonSuccess, type Service } from "./operations.ts"
import type { RawResult } from "./rawHttp.ts"

const stackTrace = /\n\s+at |\.ts:\d+|node:internal|FiberFailure|\bError: [A-Z]|ECONNREFUSED|SqlError/

const shapeProblem = (service: Service, text: string): string | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return "error body is not JSON"
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return "error body is not a JSON object"
  const o = parsed as Record<string, unknown>
  if (service === "exchange") {
    const keys = Object.keys(o).sort().join(",")
    if (keys !== "code,msg") return `exchange error keys ${keys}, not code,msg`
    if (!Number.isInteger(o["code"]) || (o["code"] as number) >= 0) return `exchange error code ${JSON.stringify(o["code"])} is not a negative integer`
    if (typeof o["msg"] !== "string") return "exchange error msg is not a string"
    return undefined
  }
  if (Object.keys(o).join(",") !== "error") return `error body keys ${Object.keys(o).join(",")}, not error`
  const e = o["error"] as Record<string, unknown> | null
  if (e === null || typeof e !== "object") return "error is not an object"
  if (Object.keys(e).sort().join(",") !== "code,message") return `error keys ${Object.keys(e).sort().join(",")}, not code,message`
  if (typeof e["code"] !== "string" || !/^[a-z]+(_[a-z]+)*$/.test(e["code"])) return `error code ${JSON.stringify(e["code"])} is not snake_case`
  if (typeof e["message"] !== "string") return "error message is not a string"
  return undefined
}

/** The problems of one answer (none: it is as the docs say). */
export const verdict = (request: FuzzRequest, result: RawResult): ReadonlyArray<string> => {
  if ("error" in result) return [result.error]
  const problems: Array<string> = []
  const { status, headers, body } = result
  const text = body.toString("utf8")
  const head = request.method === "HEAD"
  if (status < 100 || status > 599) problems.push(`status ${status}`)
  if (status >= 500) problems.push(`status ${status} (a 5xx)`)
  if (result.incomplete) problems.push("the response was cut (fewer bytes than its length)")
  // Pages and scripts (the docs page bundles swagger-ui) may say "Error: " in their own code.
  const page = status < 400 && nonJsonSuccess(request.service, request.template)
  if (!page && stackTrace.test(text)) problems.push("the body shows a stack trace or an internal error")
  const json = (headers["content-type"] ?? "").includes("application/json")
  if (status >= 400 && !head) {
    const rangeRefused = status === 416 && request.service === "social" && request.template === "/api/stream/{cid}" && body.length === 0
    if (!rangeRefused) {
      if (!json) problems.push(`error answered as ${headers["content-type"] ?? "no content type"}`)
      const shape = shapeProblem(request.service, text)
      if (shape !== undefined) problems.push(shape)
    }
  } else if (status >= 200 && status < 300 && status !== 204 && !head && !page) {
    if (!json) problems.push(`success of a JSON route answered as ${headers["content-type"] ?? "no content type"}`)
    else {
      try {
        JSON.parse(text)
      } catch {
        problems.push("success body is not JSON")
      }
    }
  }
  return problems
}
