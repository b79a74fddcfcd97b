// Starts a throwaway `litecoind -regtest` for a test file and stops it afterwards.
// Each caller gets its own datadir and ports, so test files can run in parallel. Whatever fails
// (no binary, a node that exits, one that never answers), the process is stopped and its
// datadir removed before the error reaches the test; a test process that exits without
// afterAll kills the node too. The vitest global setup installs litecoind when it can.
import { spawn, type ChildProcess } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./ports.ts"

const READY_TIMEOUT_MS = 20_000
const STOP_GRACE_MS = 10_000

export interface Litecoind {
  readonly url: string
  readonly pid: number
  readonly datadir: string
  readonly rpc: <T = unknown>(method: string, ...params: unknown[]) => Promise<T>
  readonly stop: () => Promise<void>
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

/** `datadir`: a folder kept across starts (a demo cluster's chain); by default a fresh one, removed at stop. */
export const startLitecoind = async (binary = "litecoind", options: { readonly datadir?: string } = {}): Promise<Litecoind> => {
  const keep = options.datadir !== undefined
  if (keep) mkdirSync(options.datadir!, { recursive: true })
  const dir = options.datadir ?? mkdtempSync(join(tmpdir(), "ltc-"))
  const remove = () => { if (!keep) rmSync(dir, { recursive: true, force: true }) }
  const [rpcport, port] = [await freePort(), await freePort()]
  const child: ChildProcess = spawn(binary, [
    "-regtest", `-datadir=${dir}`, "-rpcuser=u", "-rpcpassword=p", `-rpcport=${rpcport}`, `-port=${port}`,
    "-listen=0", "-txindex=1", "-fallbackfee=0.0001", "-server=1", "-printtoconsole=0",
    // Several nodes, their followers and a workload share one RPC server: the default queue of 16
    // answered HTTP 503 "Work queue depth exceeded" in loaded chaos runs (session 16).
    "-rpcworkqueue=256", "-rpcthreads=8",
    // MWEB would activate at height 431 and break block templates; keep it off (5-field form).
    "-vbparams=mweb:-2:-2:0:0"
  ], { stdio: "ignore" })
  // spawn reports a missing binary as an 'error' event, not a throw: keep it for the wait below.
  let spawnError: Error | undefined
  child.once("error", (e) => { spawnError = e })
  const killOnExit = () => { child.kill("SIGKILL"); remove() }
  process.once("exit", killOnExit)

  const url = `http://127.0.0.1:${rpcport}/`
  let id = 0
  const rpc = async <T,>(method: string, ...params: unknown[]): Promise<T> => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Basic " + Buffer.from("u:p").toString("base64") },
      body: JSON.stringify({ jsonrpc: "1.0", id: ++id, method, params })
    })
    const body = (await res.json()) as { result: T; error: { code: number; message: string } | null }
    if (body.error) throw new Error(`${method}: ${body.error.message} (${body.error.code})`)
    return body.result
  }

  let stopped: Promise<void> | undefined
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (!exited(child) && spawnError === undefined) {
        await rpc("stop").catch(() => undefined)
        await new Promise<void>((resolve) => {
          if (exited(child)) return resolve()
          const t = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS)
          child.once("exit", () => { clearTimeout(t); resolve() })
        })
      }
      process.removeListener("exit", killOnExit)
      remove()
    })()
    return stopped
  }

  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    try {
      await rpc("getblockcount")
      return { url, pid: child.pid ?? -1, datadir: dir, rpc, stop }
    } catch (e) {
      const why = spawnError !== undefined ? `${spawnError.message} (the vitest global setup installs it: apt-get install -y litecoind)`
        : exited(child) ? `it exited (code ${child.exitCode}, signal ${child.signalCode})`
        : Date.now() > deadline ? `no RPC answer within ${READY_TIMEOUT_MS} ms: ${String(e)}`
        : undefined
      if (why !== undefined) {
        child.kill("SIGKILL")
        await stop()
        throw Object.assign(new Error(`litecoind did not start: ${why}`), { datadir: dir })
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/** The node's URL with its RPC credentials in it, as an operator sets SHARDLINE_*_RPC_URL. */
export const urlWithCredentials = (node: Litecoind): string => {
  const u = new URL(node.url)
  u.username = "u"
  u.password = "p"
  return u.toString()
}
