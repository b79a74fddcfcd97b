// The post page, the embeds and the oEmbed answer, rendered from data. Pure. Every value that
// came from a member (body, tags, handle) is escaped for where it lands: HTML text and
// attributes (& < > " '), and JSON inside <script> (< > & U+2028 U+2029 as \u escapes, so no
// body can close the script or break a JavaScript parser).

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"'\u2028\u2029]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;", "\u2028": "&#x2028;", "\u2029": "&#x2029;" })[c]!)

/** JSON safe to put inside <script type="application/ld+json">. */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** The first `max` characters (code points, not UTF-16 units) of a text, with an ellipsis if cut. */
export const excerpt = (text: string, max: number): string => {
  const points = [...text.replace(/\s+/g, " ").trim()]
  return points.length <= max ? points.join("") : `${points.slice(0, max - 1).join("")}…`
}

export interface PagePost {
  readonly id: string
  readonly shortId: string
  readonly kind: string
  readonly body: string
  readonly tags: ReadonlyArray<string>
  readonly media: ReadonlyArray<{ readonly cid: string; readonly mediaType: string }>
  readonly authorWallet: string
  readonly authorHandle: string | null
  readonly assetId: string
  readonly createdAt: string
  readonly state: string
  readonly txHash: string
}

export const providerName = "Shardline"

const served = (p: PagePost) => p.state === "hosted" || p.state === "grace"

const authorName = (p: PagePost) => (p.authorHandle === null ? `#${p.assetId}` : `@${p.authorHandle}`)
/** What a page says of the body: nothing of it once the post is no longer served. */
const shownBody = (p: PagePost) => (served(p) ? p.body : `This post is ${p.state.replace("_", " ")}.`)
const titleOf = (p: PagePost) => `${authorName(p)}: ${excerpt(shownBody(p), 70) || p.kind}`

export const pageUrl = (base: string, shortId: string) => `${base}/p/${encodeURIComponent(shortId)}`
export const embedUrl = (base: string, shortId: string) => `${base}/embed/p/${encodeURIComponent(shortId)}`
export const oembedUrl = (base: string, shortId: string) => `${base}/api/public/oembed?url=${encodeURIComponent(pageUrl(base, shortId))}`

const mediaHtml = (base: string, m: PagePost["media"][number]) => {
  const src = `${base}/api/stream/${m.cid}`
  if (m.mediaType.startsWith("image/")) return `<img src="${escapeHtml(src)}" alt="" loading="lazy">`
  if (m.mediaType.startsWith("video/")) return `<video src="${escapeHtml(src)}" controls preload="metadata"></video>`
  if (m.mediaType.startsWith("audio/")) return `<audio src="${escapeHtml(src)}" controls></audio>`
  return ""
}


/** The post page: canonical, Open Graph, Twitter card, schema.org SocialMediaPosting, oEmbed discovery. */
export const postPage = (base: string, p: PagePost): string => {
  const url = pageUrl(base, p.shortId)
  const title = titleOf(p)
  const description = excerpt(shownBody(p), 200)
  const image = served(p) ? p.media.find((m) => m.mediaType.startsWith("image/")) : undefined
  const ld = {
    "@context": "https://schema.org",
    "@type": "SocialMediaPosting",
    "@id": url,
    url,
    headline: excerpt(shownBody(p), 110),
    articleBody: served(p) ? p.body : "",
    datePublished: p.createdAt,
    keywords: p.tags.join(", "),
    author: { "@type": "Person", name: authorName(p), identifier: p.authorWallet },
    identifier: p.id,
    ...(image === undefined ? {} : { image: `${base}/api/stream/${image.cid}` })
  }
  const meta = (attr: string, key: string, value: string) => `<meta ${attr}="${escapeHtml(key)}" content="${escapeHtml(value)}">`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="canonical" href="${escapeHtml(url)}">
<link rel="alternate" type="application/json+oembed" href="${escapeHtml(oembedUrl(base, p.shortId))}" title="${escapeHtml(title)}">
${meta("name", "description", description)}
${meta("property", "og:type", "article")}
${meta("property", "og:site_name", providerName)}
${meta("property", "og:title", title)}
${meta("property", "og:description", description)}
${meta("property", "og:url", url)}
${image === undefined ? "" : meta("property", "og:image", `${base}/api/stream/${image.cid}`)}
${meta("name", "twitter:card", image === undefined ? "summary" : "summary_large_image")}
${meta("name", "twitter:title", title)}
${meta("name", "twitter:description", description)}
${image === undefined ? "" : meta("name", "twitter:image", `${base}/api/stream/${image.cid}`)}
<script type="application/ld+json">${scriptJson(ld)}</script>
</head><body>
<article>
<header>${escapeHtml(authorName(p))} <small>${escapeHtml(p.authorWallet)}</small></header>
${served(p) ? `<p>${escapeHtml(p.body)}</p>${p.media.map((m) => mediaHtml(base, m)).join("")}` : `<p>This post is ${escapeHtml(p.state.replace("_", " "))}; its chain record remains.</p>`}
<footer>${p.tags.map((t) => `#${escapeHtml(t)}`).join(" ")} · proof <code>${escapeHtml(p.txHash)}</code></footer>
</article></body></html>`
}

export type Theme = "dark" | "light"
const themeCss = (theme: Theme) =>
  theme === "light" ? "body{background:#fff;color:#111}a{color:#0645ad}" : "body{background:#111;color:#eee}a{color:#8ab4f8}"

/** The iframe post card. */
export const postEmbed = (base: string, p: PagePost, theme: Theme): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(titleOf(p))}</title>
<style>${themeCss(theme)}body{font-family:sans-serif;margin:0;padding:12px}img,video{max-width:100%}</style></head>
<body data-theme="${theme}"><article><header>${escapeHtml(authorName(p))}</header>
${served(p) ? `<p>${escapeHtml(p.body)}</p>${p.media.map((m) => mediaHtml(base, m)).join("")}` : `<p>This post is ${escapeHtml(p.state.replace("_", " "))}.</p>`}
<footer><a href="${escapeHtml(pageUrl(base, p.shortId))}" target="_blank" rel="noopener">${escapeHtml(providerName)}</a></footer></article></body></html>`

export interface PlayerOptions {
  readonly autoplay: boolean
  readonly muted: boolean
  readonly startSeconds: number | undefined
}

/** The video player for one CID (t= as a media fragment, W3C Media Fragments 1.0). */
export const mediaPlayer = (base: string, cid: string, mediaType: string, o: PlayerOptions): string => {
  const src = `${base}/api/stream/${cid}${o.startSeconds === undefined ? "" : `#t=${o.startSeconds}`}`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(cid)}</title>
<style>body{margin:0;background:#000}video{width:100%;height:100vh}</style></head>
<body><video src="${escapeHtml(src)}" type="${escapeHtml(mediaType)}" controls playsinline${o.autoplay ? " autoplay" : ""}${o.muted ? " muted" : ""}></video></body></html>`
}

/** A live channel's player (HLS playlist under the channel's stream path). */
export const livePlayer = (base: string, channel: { readonly streamId: string; readonly title: string; readonly wallet: string }): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(channel.title)}</title>
<style>body{margin:0;background:#000;color:#eee;font-family:sans-serif}video{width:100%;height:90vh}</style></head>
<body data-stream="${escapeHtml(channel.streamId)}"><video src="${escapeHtml(`${base}/live/${encodeURIComponent(channel.streamId)}/index.m3u8`)}" controls autoplay muted playsinline></video>
<p>${escapeHtml(channel.title)} · ${escapeHtml(channel.wallet)}</p></body></html>`

/**
 * What a live embed shows while its channel has no stream (or no channel exists for the id or
 * wallet): a frameable page that says so, never an error body inside someone's iframe.
 */
export const liveOffline = (what: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Offline</title>
<style>body{margin:0;background:#000;color:#eee;font-family:sans-serif;display:flex;align-items:center;justify-content:center;height:100vh}</style></head>
<body data-live="offline"><p>${escapeHtml(what)} is offline.</p></body></html>`

/** oEmbed 1.0 rich answer; width and height never above what the consumer allows (§2.2). */
export const oembedOf = (base: string, p: PagePost, maxwidth: number | undefined, maxheight: number | undefined) => {
  const width = Math.min(550, maxwidth ?? 550)
  const height = Math.min(p.media.length > 0 ? 600 : 300, maxheight ?? 2000)
  return {
    type: "rich" as const,
    version: "1.0" as const,
    provider_name: providerName,
    provider_url: base,
    title: titleOf(p),
    author_name: authorName(p),
    html: `<iframe src="${escapeHtml(embedUrl(base, p.shortId))}" width="${width}" height="${height}" style="border:0" loading="lazy" allowfullscreen></iframe>`,
    width,
    height
  }
}
