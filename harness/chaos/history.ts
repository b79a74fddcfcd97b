// The campaign's history: every request the workload made and what it was told (Jepsen's history).
// The checker reads it beside the final state; a violation is shown with the smallest part of it
// that tells the story (the entries of the one order, grant or post involved).

export type Outcome =
  | { readonly kind: "answer"; readonly status: number; readonly body: unknown }
  | { readonly kind: "unknown"; readonly detail: string }

export interface Entry {
  readonly atMs: number
  readonly client: string
  readonly op: string
  readonly node: string
  /** What identifies the subject across retries: a client order id, a grant id, a post's key. */
  readonly subject: string
  readonly params: Readonly<Record<string, string>>
  readonly outcome: Outcome
}

export interface History {
  readonly entries: Array<Entry>
  readonly add: (e: Entry) => void
  readonly about: (subject: string) => ReadonlyArray<Entry>
}

export const makeHistory = (): History => {
  const entries: Array<Entry> = []
  return {
    entries,
    add: (e) => { entries.push(e) },
    about: (subject) => entries.filter((e) => e.subject === subject)
  }
}

/** A request over HTTP as a client makes it: an answer with a body, or nothing known (connection cut, timeout). */
export const call = async (url: string, init: RequestInit, timeoutMs = 15_000): Promise<Outcome> => {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) })
    const text = await res.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: kept as text (the checker counts answers outside the service's error shape)
    }
    return { kind: "answer", status: res.status, body }
  } catch (e) {
    return { kind: "unknown", detail: String(e) }
  }
}
