import { Context } from "effect"

/** Who this process is in the cluster: its name in logs, ops and the database's application_name. */
export class NodeIdentity extends Context.Tag("shardline/NodeIdentity")<NodeIdentity, { readonly name: string }>() {}
