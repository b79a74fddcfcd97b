// The live ops page (served at /ops/app.js; no inline script, no CDN). It reads /ops/stream
// (Server-Sent Events): `history` (up to 15 minutes of samples), then `view` and `sample` every
// 2 s, and draws tables and inline SVG charts. Nothing here is needed to read the JSON at /ops.
"use strict"
;(() => {
  const historyMax = 450
  const colors = ["#2f6fde", "#d9480f", "#2b8a3e", "#ae3ec9", "#f08c00", "#0c8599", "#c2255c", "#5c7cfa", "#495057"]
  let samples = []
  let view = null

  const $ = (id) => document.getElementById(id)
  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag)
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v))
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)))
    return e
  }
  const table = (id, head, rows) => {
    const t = el("table", {}, el("tr", {}, ...head.map((h) => el("th", {}, h))))
    for (const r of rows) t.append(el("tr", {}, ...r.map((c) => (c instanceof Node ? el("td", {}, c) : el("td", {}, c)))))
    $(id).replaceChildren(t)
  }
  const fmt = (n) => (n === null || n === undefined ? "–" : Number.isInteger(n) ? String(n) : n.toFixed(2))
  const status = (ok, yes, no) => el("span", { class: ok ? "ok" : "bad" }, ok ? yes : no)
  const sum = (o) => Object.values(o || {}).reduce((a, b) => a + b, 0)

  const svgNs = "http://www.w3.org/2000/svg"
  const svg = (tag, attrs) => {
    const e = document.createElementNS(svgNs, tag)
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v))
    return e
  }
  /** One chart: a polyline per series over the samples, y from 0 to the largest value. */
  const chart = (id, series) => {
    const w = 600, h = 110, pad = 18
    const all = series.flatMap((s) => s.points.map((p) => p[1]))
    const max = Math.max(1, ...all)
    const t0 = samples.length ? samples[0].at : 0
    const t1 = samples.length ? samples[samples.length - 1].at : 1
    const x = (t) => pad + ((t - t0) / Math.max(1, t1 - t0)) * (w - 2 * pad)
    const y = (v) => h - pad - (v / max) * (h - 2 * pad)
    const root = svg("svg", { class: "chart", viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: "none", role: "img" })
    root.append(svg("line", { x1: pad, y1: h - pad, x2: w - pad, y2: h - pad, stroke: "#dde2e8" }))
    const top = svg("text", { x: 2, y: 12 })
    top.textContent = fmt(max)
    root.append(top)
    series.forEach((s, i) => {
      if (s.points.length === 0) return
      root.append(svg("polyline", { stroke: colors[i % colors.length], points: s.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" "), "data-series": s.name }))
    })
    const legend = el("div", { class: "legend" }, ...series.map((s, i) => el("span", {}, el("i", {}), s.name)))
    legend.querySelectorAll("i").forEach((i, n) => i.setAttribute("class", `c${n % colors.length}`))
    $(id).replaceChildren(root, legend)
  }
  const seriesBy = (pick) => {
    const names = new Set()
    for (const s of samples) for (const k of Object.keys(pick(s) || {})) names.add(k)
    return [...names].sort().map((name) => ({ name, points: samples.map((s) => [s.at, (pick(s) || {})[name] || 0]) }))
  }

  const renderView = () => {
    if (view === null) return
    $("at").textContent = new Date(view.at).toLocaleTimeString()
    $("access").textContent = view.access === "public" ? "public view (no ops token configured)" : "full view"
    // `gone`: no heartbeat for longer than the lock expiration, so out of the ring (a killed node).
    table("runners", ["runner", "state", "last heartbeat"], view.runners.map((r) => {
      const state = r.state || (r.healthy ? "healthy" : "unhealthy")
      const ago = r.heartbeatAgeMs === undefined ? "" : ` (${fmt(Math.round(r.heartbeatAgeMs / 100) / 10)} s ago)`
      return [r.address, el("span", { class: state === "healthy" ? "ok" : "bad", "data-state": state }, state === "gone" ? "gone: left the ring" : state),
        new Date(r.lastHeartbeat).toLocaleTimeString() + ago]
    }))
    table("shards", ["node", "pid", "shards", "sample"], view.shardOwners.map((o) => [o.node, fmt(o.pid), o.shards, o.sample.join(" ")]))
    const types = [...new Set(view.nodes.flatMap((n) => Object.keys(n.stats.liveEntities || {}).concat(Object.keys(n.stats.messages || {}))))].sort()
    const last = samples[samples.length - 1]
    table("entities", ["type", ...view.nodes.map((n) => n.node.replace(/^shardline:/, "")), "msg/s", "in hand", "restarts", "last error"], types.map((t) => {
      const defects = view.nodes.map((n) => (n.stats.lastDefects || {})[t]).filter(Boolean).sort((a, b) => b.at.localeCompare(a.at))
      return [t, ...view.nodes.map((n) => fmt((n.stats.liveEntities || {})[t] || 0)), fmt(last ? last.messagesPerSec[t] || 0 : 0),
        fmt(sum(view.nodes.map((n) => (n.stats.inFlight || {})[t] || 0))), fmt(view.entityRestarts[t] || 0),
        defects.length ? el("span", { class: "err" }, `${defects[0].at.slice(11, 19)} ${defects[0].message}`) : ""]
    }))
    table("timers", ["pending timers", "next due", "unprocessed messages", "oldest"], [[view.pendingTimers.count, view.pendingTimers.oldestDueAt || "–", view.unprocessedMessages.count, view.unprocessedMessages.oldestAt || "–"]])
    const lag = {}
    for (const n of view.nodes) for (const [le, c] of Object.entries(n.stats.timerLag || {})) lag[le] = (lag[le] || 0) + c
    table("lateness", ["late by ≤ ms", "timers"], Object.entries(lag).sort((a, b) => Number(a[0]) - Number(b[0])).map(([le, c]) => [le === "Infinity" ? "more" : le, c]))
    table("chains", ["chain", "node", "kind", "height", "state"], view.chains.map((c) => [c.chain, c.node.replace(/^shardline:/, ""), c.kind, fmt(c.height), status(c.available, "up", c.error || "down")]))
    table("followers", ["node", "Omni view behind the ledger (blocks)"], view.nodes.map((n) => [n.node, fmt(n.stats.followerLag)]))
    table("db", ["node", "active", "idle", "idle in tx", "pool"], view.nodes.map((n) => {
      const c = (n.stats.db || {}).connections || {}
      return [n.node, fmt(c.active || 0), fmt(c.idle || 0), fmt(c["idle in transaction"] || 0), fmt((n.stats.db || {}).poolSize)]
    }))
    const http = last ? last.http : {}
    table("http", ["listener", "req/s", "4xx/s", "5xx/s"], Object.entries(http).sort().map(([s, r]) => [s, fmt(r.rps), fmt(r.clientErrors), r.serverErrors > 0 ? el("span", { class: "bad" }, fmt(r.serverErrors)) : fmt(0)]))
  }
  const renderCharts = () => {
    chart("chart-messages", seriesBy((s) => s.messagesPerSec))
    chart("chart-http", seriesBy((s) => Object.fromEntries(Object.entries(s.http).map(([k, v]) => [k, v.rps]))))
    chart("chart-errors", seriesBy((s) => Object.fromEntries(Object.entries(s.http).flatMap(([k, v]) => [[`${k} 4xx`, v.clientErrors], [`${k} 5xx`, v.serverErrors]]))))
    chart("chart-shards", seriesBy((s) => s.shards))
    chart("chart-timers", [{ name: "pending timers", points: samples.map((s) => [s.at, s.pendingTimers]) }, { name: "messages in hand", points: samples.map((s) => [s.at, sum(s.inFlight)]) }])
    chart("chart-db", [{ name: "active connections", points: samples.map((s) => [s.at, s.dbActive]) }, { name: "pool size", points: samples.map((s) => [s.at, s.dbPool]) }])
    $("samples").textContent = String(samples.length)
    $("samples").setAttribute("data-seq", samples.length ? samples[samples.length - 1].seq : 0)
  }

  const source = new EventSource("/ops/stream")
  source.addEventListener("history", (e) => {
    const older = JSON.parse(e.data)
    const seen = new Set(samples.map((s) => s.seq))
    samples = samples.concat(older.filter((s) => !seen.has(s.seq))).sort((a, b) => a.at - b.at).slice(-historyMax)
    renderCharts()
  })
  source.addEventListener("view", (e) => {
    view = JSON.parse(e.data)
    renderView()
  })
  source.addEventListener("sample", (e) => {
    samples = samples.concat([JSON.parse(e.data)]).slice(-historyMax)
    renderCharts()
    renderView()
  })
  source.addEventListener("open", () => { $("conn").textContent = "live" })
  source.addEventListener("error", () => { $("conn").textContent = "reconnecting…" })
})()
