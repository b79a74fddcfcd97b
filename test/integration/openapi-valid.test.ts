// The OpenAPI documents of all three listeners, checked against the OpenAPI 3.1 JSON schema
// (@seriousme/openapi-schema-validator) and for what clients rely on: servers, security schemes,
// required order parameters, string order ids.
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { startNode, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  db = await createTestDatabase("openapi")
  node = await startNode(db.url)
})
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

type Doc = Record<string, any>

const fetchDoc = async (url: string): Promise<Doc> => {
  const r = await fetch(url)
  expect(r.status).toBe(200)
  return (await r.json()) as Doc
}

/** Follows a local `$ref` ("#/components/schemas/X"). */
const resolve = (doc: Doc, node: Doc): Doc =>
  typeof node.$ref === "string" ? resolve(doc, node.$ref.slice(2).split("/").reduce((n: Doc, k: string) => n[k], doc)) : node

const expectValid = async (doc: Doc) => {
  const result = await new Validator().validate(structuredClone(doc) as never)
  // The errors are shown on failure, so the report names what is wrong.
  expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 4000)).toEqual([])
  expect(result.valid).toBe(true)
}

const expectClientBasics = (doc: Doc) => {
  expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
  expect(Array.isArray(doc.servers) && doc.servers.length > 0).toBe(true)
}

/** Drops every `"$id": "/schemas/unknown"` (Effect's JSON Schema for Schema.Unknown repeats it). */

describe("OpenAPI documents", () => {
  it("exchange: the document validates as OpenAPI 3.1", async () => {
    await expectValid(await fetchDoc(`${node.baseUrl}/api/public/v1/openapi.json`))
  })

  it("no document lists HttpApi's built-in decode error: every listener answers decode failures in its own shape", async () => {
    for (const url of [`${node.baseUrl}/openapi.json`, `${node.deskUrl}/openapi.json`, `${node.socialUrl}/openapi.json`]) {
      const doc = await fetchDoc(url)
      expect(JSON.stringify(doc)).not.toContain("HttpApiDecodeError")
    }
  })

  it("exchange: both paths serve one 3.1 document with servers, the API-key scheme, required order parameters and string order ids", async () => {
    const doc = await fetchDoc(`${node.baseUrl}/api/public/v1/openapi.json`)
    expect(await fetchDoc(`${node.baseUrl}/openapi.json`)).toEqual(doc)
    expectClientBasics(doc)
    const schemes = Object.values(doc.components?.securitySchemes ?? {}) as Array<Doc>
    expect(schemes).toContainEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "X-MBX-APIKEY" }))
    const post = doc.paths["/api/public/v1/order"].post
    const params = (post.parameters as Array<Doc>).map((p) => resolve(doc, p))
    for (const name of ["symbol", "side", "price", "quantity", "timestamp", "signature"]) {
      const p = params.find((q) => q.name === name)
      expect(p, `parameter ${name}`).toBeDefined()
      expect(p!.required, `parameter ${name} required`).toBe(true)
    }
    for (const name of ["type", "timeInForce", "recvWindow", "newClientOrderId"]) {
      expect(params.find((q) => q.name === name)?.required ?? false, `parameter ${name} optional`).toBe(false)
    }
    // FULL, RESULT or ACK (newOrderRespType): every shape carries the order id as a string.
    const response = resolve(doc, post.responses["200"].content["application/json"].schema)
    const shapes = (response.anyOf ?? [response]).map((s: Doc) => resolve(doc, s))
    expect(shapes).toHaveLength(3)
    for (const shape of shapes) expect(resolve(doc, shape.properties.orderId).type).toBe("string")
  })

  it("desk: a valid 3.1 document with both key schemes and the web app's session schemes", async () => {
    const doc = await fetchDoc(`${node.deskUrl}/openapi.json`)
    await expectValid(doc)
    expectClientBasics(doc)
    expect(doc.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }),
      bearer: expect.objectContaining({ type: "http", scheme: "bearer" }),
      session: expect.objectContaining({ type: "http", scheme: "bearer" }),
      cookie: expect.objectContaining({ type: "apiKey", in: "cookie", name: "sl_desk_session" })
    })
    // The partner routes take a key, the web app's routes a session.
    expect(doc.paths["/api/public/v1/key"].get.security).toEqual([{ apiKey: [] }, { bearer: [] }])
    expect(doc.paths["/api/app/keys"].get.security).toEqual([{ session: [] }, { cookie: [] }])
  })

  it("social: a valid 3.1 document with the bearer and cookie session schemes", async () => {
    const doc = await fetchDoc(`${node.socialUrl}/openapi.json`)
    await expectValid(doc)
    expectClientBasics(doc)
    expect(doc.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: "http", scheme: "bearer" }),
      cookie: expect.objectContaining({ type: "apiKey", in: "cookie", name: "sl_session" })
    })
  })
})
