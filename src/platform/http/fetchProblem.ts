// Why a fetch() from a command-line tool failed, in a few words: undici says only "fetch failed"
// and keeps the reason (refused, unknown host, timeout) in its cause.
const networkProblems: Record<string, string> = {
  ECONNREFUSED: "connection refused (nothing listens there)",
  ECONNRESET: "the connection was reset",
  ENOTFOUND: "unknown host",
  EAI_AGAIN: "the host name could not be resolved now",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  UND_ERR_HEADERS_TIMEOUT: "no answer in time",
  UND_ERR_SOCKET: "the connection was closed"
}

const codeOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof (e as { code: unknown }).code === "string" ? (e as { code: string }).code : undefined

/** One line: the cause's code in words when known, else the first line of the deepest message. */
export const fetchProblem = (e: unknown): string => {
  let at: unknown = e
  for (let depth = 0; depth < 4 && at !== undefined; depth++) {
    const known = networkProblems[codeOf(at) ?? ""]
    if (known !== undefined) return known
    if (at instanceof Error && at.name === "TimeoutError") return "no answer in time"
    at = at instanceof Error ? at.cause : undefined
  }
  const last = e instanceof Error && e.cause instanceof Error ? e.cause : e
  return (last instanceof Error ? last.message : String(last)).split("\n")[0]!
}
