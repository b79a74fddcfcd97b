// HTTP helpers the listener tests share: raw requests (fetch would normalise or refuse much of
// what a hostile client sends), raw bytes on a socket, and the offline docs page check.
import { request } from "node:http"
import { connect } from "node:net"
import { expect } from "vitest"

export interface RawReply {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

/** One request with exactly these method, path, headers and body bytes (none for HEAD). */
export const sendRaw = (baseUrl: string, method: string, path: string, headers: Record<string, string>, bodyIn: Buffer) =>
  new Promise<RawReply>((resolve, reject) => {
    const url = new URL(baseUrl)
    const body = method === "HEAD" ? Buffer.alloc(0) : bodyIn
    const req = request({ host: url.hostname, port: url.port, method, path, agent: false, headers: { ...headers, "content-length": String(body.length) } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), body: Buffer.concat(chunks).toString("latin1") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

/** Writes the bytes on a fresh connection and reads everything until the server closes it. */
export const rawSocket = (baseUrl: string, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const url = new URL(baseUrl)
    const socket = connect(Number(url.port), url.hostname, () => socket.end(bytes))
    let out = ""
    socket.on("data", (c: Buffer) => (out += c.toString("latin1")))
    socket.on("close", () => resolve(out))
    socket.on("error", reject)
  })

/** The body of a raw HTTP answer. */
export const rawBody = (answer: string): string => answer.slice(answer.indexOf("\r\n\r\n") + 4)

/** The docs page answers, is swagger-ui, loads nothing from the internet and shows `path`. */
export const expectOfflineDocsPage = async (url: string, path: string) => {
  const r = await fetch(url)
  expect(r.status).toBe(200)
  const html = await r.text()
  expect(html).toContain("swagger-ui")
  expect(html).not.toMatch(/<script[^>]+src=["']https?:/)
  expect(html).not.toMatch(/<link[^>]+href=["']https?:/)
  expect(html).toContain(path)
}
