// Every service of the system, each by its front door (src/<service>/<Service>.ts): the one list
// a node (cluster/Node.ts), the settings record (src/config.ts) and the migration list
// (src/migrations.ts) are derived from. A fourth service is one more entry here (docs/layout.md).
// In this order a devnet makes the services' worlds (the ledger hands out property ids in it).
import * as Desk from "./desk/Desk.ts"
import * as Exchange from "./exchange/Exchange.ts"
import * as Social from "./social/Social.ts"

export const services = [Exchange.frontDoor, Desk.frontDoor, Social.frontDoor] as const

export type Services = typeof services
