import { startLitecoind } from "../harness/litecoind.ts"
const ltc = await startLitecoind()
const rpc = ltc.rpc
await rpc("createwallet", "chaos")
const miner = await rpc<string>("getnewaddress", "", "legacy")
const burn = "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn"
await rpc("generatetoaddress", 3, miner)
await rpc("generatetoaddress", 101, burn)
for (let i = 0; i < 4; i++) await rpc("sendtoaddress", burn, 2)
let fails = 0, sends = 0
for (let t = 0; t < 400; t++) {
  try { await rpc("sendtoaddress", burn, 0.01 + (t % 5) * 0.01); sends++ } catch (e) { fails++; if (fails < 4) console.log(t, String(e)) }
  if (t % 2 === 0) await rpc("generatetoaddress", 1, burn)
  if (t % 37 === 36) { const h = await rpc<number>("getblockcount"); const d = 1 + (t % 3); await rpc("invalidateblock", await rpc<string>("getblockhash", h - d + 1)); console.log(`reorg ${d} at ${h}; mempool ${(await rpc<Array<string>>("getrawmempool")).length}; balance ${await rpc("getbalance")}`) }
}
console.log({ sends, fails, balance: await rpc("getbalance"), info: await rpc("getbalances") })
await ltc.stop()
