// Moved to harness/ (the chaos campaign uses it too); tests keep this path.
export * from "../../harness/clusterClient.ts"
