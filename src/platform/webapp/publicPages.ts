// What the server-rendered pages people share have in common on every listener (the social post
// page and its embeds, the desk's wallet-link page): the web apps' stylesheet, the icon, and a
// Content-Security-Policy with no script at all, and QR codes drawn on the server.
import QRCode from "qrcode"
import { Effect } from "effect"

/** The web apps' one stylesheet (WebApp.ts serves it on every listener). */
export const stylesheetPath = "/app/app.css"

/**
 * No script runs; styles, images and media come from this origin only. A page is never framed
 * unless `frameable` (embeds are framed anywhere: that is what they are for).
 */
export const publicPageCsp = (frameable: boolean) =>
  ["default-src 'none'", "style-src 'self'", "img-src 'self' data:", "media-src 'self'", "base-uri 'none'", "form-action 'none'",
    `frame-ancestors ${frameable ? "*" : "'none'"}`].join("; ")

/** The head every public page starts with; `title` must already be escaped. */
export const publicHead = (escapedTitle: string) => `<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapedTitle}</title><link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="${stylesheetPath}">`

/** A QR code of `text` as inline SVG (the maintained `qrcode` library, as the apps draw theirs). */
export const qrSvg = (text: string) => Effect.promise(() => QRCode.toString(text, { type: "svg", errorCorrectionLevel: "M", margin: 2 }))

/** The q of each media range an Accept header lists (missing or bad q: 1). */
const acceptRanges = (accept: string) =>
  accept.split(",").map((part) => {
    const [range, ...params] = part.split(";").map((x) => x.trim().toLowerCase())
    const q = params.map((p) => /^q=([0-9.]+)$/.exec(p)).find((m) => m !== null)
    const value = q === undefined || q === null ? 1 : Number(q[1])
    return { range: range ?? "", q: Number.isFinite(value) ? value : 1 }
  })

/**
 * Whether a request's Accept prefers an HTML page to JSON: it names text/html (or XHTML) itself,
 * with a higher q than JSON gets (named, else by a wildcard). Browsers do; no Accept, the bare wildcard and
 * `application/json` (wallets, programs) do not, so they keep the JSON.
 */
export const prefersHtml = (accept: string | undefined): boolean => {
  if (accept === undefined || accept.trim() === "") return false
  const ranges = acceptRanges(accept)
  const best = (names: ReadonlyArray<string>) => Math.max(0, ...ranges.filter((r) => names.includes(r.range)).map((r) => r.q))
  const html = best(["text/html", "application/xhtml+xml"])
  const json = ranges.some((r) => r.range === "application/json") ? best(["application/json"]) : best(["application/*", "*/*"])
  return html > 0 && html > json
}
