// Starts a throwaway `litecoind -regtest` for a test file and stops it afterwards.
// Each caller gets its own datadir and ports, so test files can run in parallel.
import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../harness/ports.ts"

export interface Litecoind {
  readonly url: string
  readonly rpc: <T = unknown>(method: string, ...params: unknown[]) => Promise<T>
  readonly stop: () => Promise<void>
}


export const startLitecoind = async (): Promise<Litecoind> => {
  const dir = mkdtempSync(join(tmpdir(), "ltc-"))
  const rpcport = await freePort()
  const port = await freePort()
  const child: ChildProcess = spawn("litecoind", [
    "-regtest", `-datadir=${dir}`, "-rpcuser=u", "-rpcpassword=p", `-rpcport=${rpcport}`, `-port=${port}`,
    "-listen=0", "-txindex=1", "-fallbackfee=0.0001", "-server=1", "-printtoconsole=0",
    // MWEB would activate at height 431 and break block templates; keep it off (5-field form).
    "-vbparams=mweb:-2:-2:0:0"
  ], { stdio: "ignore" })
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
  const deadline = Date.now() + 20_000
  for (;;) {
    try { await rpc("getblockcount"); break } catch (e) {
      if (Date.now() > deadline) { child.kill("SIGKILL"); throw new Error(`litecoind did not start: ${String(e)}`) }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const stop = async () => {
    await rpc("stop").catch(() => undefined)
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      const t = setTimeout(() => { child.kill("SIGKILL") }, 10_000)
      child.once("exit", () => { clearTimeout(t); resolve() })
    })
    rmSync(dir, { recursive: true, force: true })
  }
  return { url, rpc, stop }
}
