// The live ops page (issue 26): an HTML shell, its stylesheet and its script, all served by the
// exchange listener itself (works offline, no CDN) under a strict Content-Security-Policy: no
// inline script or style, nothing loaded from elsewhere, the stream from the same origin.
import { readFileSync } from "node:fs"

const asset = (name: string) => readFileSync(new URL(`./page/${name}`, import.meta.url), "utf8")

export const opsScript = asset("ops.js")
export const opsStyles = asset("ops.css")

export const opsPageCsp =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** Pure: does the client ask for HTML (a browser) rather than JSON (a program)? */
export const wantsHtml = (accept: string | undefined): boolean => /\btext\/html\b/i.test(accept ?? "")

const section = (title: string, ...ids: ReadonlyArray<string>) =>
  `<section><h2>${title}</h2>${ids.map((id) => `<div id="${id}"></div>`).join("")}</section>`

export const opsPageHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Shardline ops</title>
<link rel="stylesheet" href="/ops/app.css">
<script src="/ops/app.js" defer></script>
</head>
<body>
<header><h1>Shardline ops</h1><span class="muted">updated <span id="at">–</span></span><span class="muted" id="conn">connecting…</span><span class="muted" id="access"></span><span class="muted"><span id="samples" data-seq="0">0</span> samples (15 min kept)</span></header>
<main>
${section("Runners", "runners")}
${section("Shard owners", "shards", "chart-shards")}
${section("Entities: alive per node, messages, supervision", "entities", "chart-messages")}
${section("Durable timers", "timers", "lateness", "chart-timers")}
${section("Chains", "chains", "followers")}
${section("Postgres", "db", "chart-db")}
${section("HTTP per listener", "http", "chart-http", "chart-errors")}
</main>
<noscript><p class="note">This page draws with its own script; the same data is JSON at /ops.</p></noscript>
</body>
</html>
`

/** What a browser sees at /ops without the token (401): how a person opens the page. */
export const opsTokenPageHtml = (reason: "missing" | "wrong") => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Shardline ops: token needed</title>
<link rel="stylesheet" href="/ops/app.css">
</head>
<body>
<header><h1>Shardline ops</h1></header>
<main>
<section id="token-needed"><h2>${reason === "wrong" ? "That ops token is not this node's" : "This node requires its ops token"}</h2>
<p>Open <code>/ops?token=&lt;SHARDLINE_OPS_TOKEN&gt;</code> once: the node keeps it in a cookie for this page only (HttpOnly, SameSite=Strict, until the browser closes) and sends you back here without the token in the address.</p>
<p>Programs send <code>Authorization: Bearer &lt;token&gt;</code> instead.</p></section>
</main>
</body>
</html>
`
