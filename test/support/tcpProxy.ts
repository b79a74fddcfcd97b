// Moved to harness/ so the chaos campaign (harness/chaos) can use it too; tests keep this path.
export * from "../../harness/tcpProxy.ts"
