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
