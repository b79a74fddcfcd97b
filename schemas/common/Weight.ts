// An endpoint annotation every service uses: the request weight (Binance's word) the edge charges
// to the client IP's budget, and on signed exchange routes to the key's. Declared with the route,
// read by src/platform/http/RouteTable.ts.
import { Context } from "effect"

export class Weight extends Context.Tag("shardline/http/Weight")<Weight, number>() {}
