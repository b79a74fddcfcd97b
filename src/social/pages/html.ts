// The post page, the embeds and the oEmbed answer, rendered from data, in the web apps' design
// (their stylesheet; no script). Pure. Every value that
// came from a member (body, tags, handle) is escaped for where it lands: HTML text and
// attributes (& < > " '), and JSON inside <script> (< > & U+2028 U+2029 as \u escapes, so no
// body can close the script or break a JavaScript parser).

import { publicHead } from "../../platform/webapp/publicPages.ts"

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

/** What the ledger holds for a post: its proof stamp (CHV1P) and where it points. */
export interface PageProof {
  /** The stamp's transaction; null while it is not sent yet. */
  readonly txHash: string | null
  readonly opReturn: string | null
  readonly metadataCid: string
  /** The post's own derived address, which made the stamp. */
  readonly ownerAddress: string
  readonly derivationPath: string
  /** The explorer's page of the transaction (SHARDLINE_SOCIAL_EXPLORER_TX_URL); null when none is set. */
  readonly explorerTxUrl: string | null
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
  readonly proof: PageProof
}

export const providerName = "Shardline"

/** The explorer's page of a transaction: the template's `{txid}` replaced. */
export const explorerTxUrl = (template: string, txid: string) => template.replace("{txid}", encodeURIComponent(txid))

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

/** "21 Mar 2026, 14:05 UTC": the same on every node and in every browser. */
const dateText = (iso: string) => {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ""
  const month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][d.getUTCMonth()]
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")} UTC`
}

const authorHeader = (p: PagePost, wide: boolean) => {
  const initial = p.authorHandle === null ? "#" : [...p.authorHandle][0]!.toUpperCase()
  return `<header class="author-line">
<span class="avatar" aria-hidden="true">${escapeHtml(initial)}</span>
<div class="who-block"><span class="author">${escapeHtml(authorName(p))}</span>${p.authorHandle === null ? "" : ` <span class="muted">#${escapeHtml(p.assetId)}</span>`}
${wide ? `<div class="muted mono wallet" title="The author's wallet">${escapeHtml(p.authorWallet)}</div>` : ""}</div>
<time class="muted" datetime="${escapeHtml(p.createdAt)}">${escapeHtml(dateText(p.createdAt))}</time>
</header>`
}

const postContent = (base: string, p: PagePost) =>
  served(p)
    ? `${p.body === "" ? "" : `<div class="body">${escapeHtml(p.body)}</div>`}${p.media.length === 0 ? "" : `<div class="media">${p.media.map((m) => mediaHtml(base, m)).join("")}</div>`}`
    : `<p class="gone">This post is ${escapeHtml(p.state.replace("_", " "))}; its chain record remains.</p>`

const tagList = (p: PagePost) =>
  p.tags.length === 0 ? "" : `<ul class="tags" aria-label="Tags">${p.tags.map((t) => `<li>#${escapeHtml(t)}</li>`).join("")}</ul>`

const txLink = (proof: PageProof) =>
  proof.txHash === null ? "" : proof.explorerTxUrl === null
    ? `<code>${escapeHtml(proof.txHash)}</code>`
    : `<a class="mono" href="${escapeHtml(proof.explorerTxUrl)}" rel="noopener" data-field="txHash">${escapeHtml(proof.txHash)}</a>`

/** The proof in words: what the stamp on the ledger shows, and what it does not. */
const proofPanel = (p: PagePost) => {
  const proof = p.proof
  if (proof.txHash === null) {
    return `<section class="proof" aria-labelledby="proof-h"><h2 id="proof-h">Proof on the ledger</h2>
<p>The stamp that names this post's content is on its way to the ledger: this page shows its transaction once it is sent.</p>
<dl class="kv"><dt>Content</dt><dd class="mono">${escapeHtml(proof.metadataCid)}</dd></dl></section>`
  }
  return `<section class="proof" aria-labelledby="proof-h"><h2 id="proof-h">What the ledger proves</h2>
<p>On ${escapeHtml(dateText(p.createdAt))}, ${escapeHtml(authorName(p))}'s wallet stamped this post on the ledger: transaction ${txLink(proof)} carries
the tag <code>${escapeHtml(proof.opReturn ?? "")}</code>, which names the post's content by its fingerprint (CID). The ledger proves when the post was
published and by which wallet; the content this service serves hashes to that CID, so anyone can check it is exactly what was stamped.
${served(p) ? "" : "The post is no longer served here, but the ledger's record of it cannot be erased."}</p>
${proof.explorerTxUrl === null ? `<p class="muted">No block explorer is configured here (SHARDLINE_SOCIAL_EXPLORER_TX_URL): look the transaction up on any node of the ledger.</p>` : ""}
<dl class="kv">
<dt>Transaction</dt><dd>${txLink(proof)}</dd>
<dt>Tag (OP_RETURN)</dt><dd class="mono">${escapeHtml(proof.opReturn ?? "")}</dd>
<dt>Content CID</dt><dd class="mono">${escapeHtml(proof.metadataCid)}</dd>
<dt>Stamped by</dt><dd class="mono">${escapeHtml(proof.ownerAddress)} <span class="muted">(${escapeHtml(proof.derivationPath)})</span></dd>
</dl></section>`
}

const head = (title: string) => publicHead(escapeHtml(title))

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
<html lang="en"><head>${head(title)}
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
</head><body class="public">
<header class="top"><a class="brand" href="/app/">${providerName}</a><a class="join" href="/app/">Open the app</a></header>
<main id="main">
<article class="post" data-post="${escapeHtml(p.shortId)}" data-kind="${escapeHtml(p.kind)}">
${authorHeader(p, true)}
${postContent(base, p)}
${tagList(p)}
${proofPanel(p)}
</article>
<p class="muted share">Share: <span class="mono">${escapeHtml(url)}</span></p>
</main></body></html>`
}

export type Theme = "dark" | "light"

/** The iframe post card: the page's post, compact, in the app's design, dark or light. */
export const postEmbed = (base: string, p: PagePost, theme: Theme): string => `<!doctype html>
<html lang="en"><head>${head(titleOf(p))}</head>
<body class="embed theme-${theme}" data-theme="${theme}"><article class="post" data-post="${escapeHtml(p.shortId)}">
${authorHeader(p, false)}
${postContent(base, p)}
${tagList(p)}
<footer class="embed-foot"><span class="muted">${p.proof.txHash === null ? "Stamp on its way to the ledger" : "Stamped on the ledger"}</span>
<a href="${escapeHtml(pageUrl(base, p.shortId))}" target="_blank" rel="noopener">View on ${escapeHtml(providerName)}</a></footer></article></body></html>`

export interface PlayerOptions {
  readonly autoplay: boolean
  readonly muted: boolean
  readonly startSeconds: number | undefined
}

/** The video player for one CID (t= as a media fragment, W3C Media Fragments 1.0). */
export const mediaPlayer = (base: string, cid: string, mediaType: string, o: PlayerOptions): string => {
  const src = `${base}/api/stream/${cid}${o.startSeconds === undefined ? "" : `#t=${o.startSeconds}`}`
  return `<!doctype html>
<html lang="en"><head>${head(cid)}</head>
<body class="player"><video src="${escapeHtml(src)}" type="${escapeHtml(mediaType)}" controls playsinline${o.autoplay ? " autoplay" : ""}${o.muted ? " muted" : ""}></video></body></html>`
}

/** A live channel's player (HLS playlist under the channel's stream path). */
export const livePlayer = (base: string, channel: { readonly streamId: string; readonly title: string; readonly wallet: string }): string => `<!doctype html>
<html lang="en"><head>${head(channel.title)}</head>
<body class="player" data-stream="${escapeHtml(channel.streamId)}"><video src="${escapeHtml(`${base}/live/${encodeURIComponent(channel.streamId)}/index.m3u8`)}" controls autoplay muted playsinline></video>
<p>${escapeHtml(channel.title)} · ${escapeHtml(channel.wallet)}</p></body></html>`

/**
 * What a live embed shows while its channel has no stream (or no channel exists for the id or
 * wallet): a frameable page that says so, never an error body inside someone's iframe.
 */
export const liveOffline = (what: string): string => `<!doctype html>
<html lang="en"><head>${head("Offline")}</head>
<body class="player offline" data-live="offline"><p>${escapeHtml(what)} is offline.</p></body></html>`

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
