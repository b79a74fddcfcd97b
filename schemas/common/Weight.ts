// An endpoint annotation every service uses: the request weight (Binance's word) the edge charges
// to the client IP's budget, and on signed exchange routes to the key's. Declared with the route,
// read by src/platform/http/RouteTable.ts.
import { Context } from "effect"

export class Weight extends Context.Tag("shardline/http/Weight")<Weight, number>() {}

/** A group or endpoint annotation: keyless public reads served from a cache (the desk's transparency
 * and registries: "no rate-limit tier" in the spec). The edge charges them to a per-IP fair-use
 * budget of their own, apart from the listener's per-IP budget that keyed clients spend. */
export class FairUse extends Context.Tag("shardline/http/FairUse")<FairUse, true>() {}
