// The social web app (issue 24): sign-in, then the composer (body, kind, tags, media with an upload
// progress bar), the proof of what was published, the member's posts with their hosting state
// (renew, takedown), the balance and top-up address, and the sessions. Built only on the social
// API (the same routes programs use). Plain JavaScript, bundled by src/platform/webapp/WebApp.ts.
import { ApiError, api, countdown, el, field, linkQr, notice, qrCode, requireSession, run, section, sessionsSection, shell, signInPage, upload } from "../../platform/webapp/client/common.js"

const title = "Social"
/**
 * How often the home reads the account again: a top-up is credited once it is 3 blocks deep (nodes
 * look every 2 s) and hosting states change on the service's clock, so both show without a reload.
 */
const ME_POLL_MS = 5000

/** What the ledger holds of a new post, in words: stamped, on its way, or waiting for the member's wallet. */
const stampingSentence = (receipt) => {
  if (receipt.txHash) return "The ledger now holds a stamp naming this post's content: anyone can check that this wallet published exactly this, and when."
  if (receipt.stamping === "awaiting_signature") {
    return `The post is written; its stamp waits for your wallet's signature (your wallet signs it, not this service) and lapses at ${new Date(receipt.expiresAt).toLocaleString()} if unsigned.`
  }
  return "The post is written; its stamp goes on the ledger shortly."
}

/**
 * A post action whose stamps the member's wallet signs: the QR and "Open in wallet" deep link of its
 * signing URL (GET /api/social/posts/{id}/wallet-signing; the wallet reads the PSBTs there and sends
 * them back signed, no session needed), then a poll every `pollIntervalMs` (the spec's 2 s). For a
 * new post (`action` "publish"), its public lookup, 404 until it is signed, then its proof, which
 * `onSigned` shows; for a renewal or takedown, the signing URL itself, which answers 404 once
 * nothing waits any more.
 */
const walletSigningArea = (postId, onSigned, action = "publish") => {
  const what = action === "publish" ? "the post" : action === "renew" ? "the renewal" : "the takedown"
  const area = el("div", { class: "link-qr wallet-signing" })
  const state = el("p", { class: "link-state", "data-state": "preparing", role: "status" }, "Preparing the code for your wallet…")
  const setState = (name, text, cls) => {
    state.dataset.state = name
    state.className = `link-state ${cls ?? ""}`
    state.textContent = text
  }
  area.append(state)
  const start = async () => {
    let signing
    try {
      signing = await api(`/api/social/posts/${encodeURIComponent(postId)}/wallet-signing`)
    } catch (e) {
      return setState("error", e.message, "error")
    }
    setState("waiting", "Waiting for your wallet to sign the post's stamps…")
    area.replaceChildren(
      el("p", {}, "Scan the code with your Shardline wallet, or open it in the wallet on this device: it shows what it signs, signs with the post's own key, and sends the signatures back."),
      await qrCode(signing.url, `QR code handing ${what}'s stamps to your wallet`),
      el("p", {}, el("a", { href: signing.deepLink, class: "button", "data-link": "wallet-signing" }, "Open in wallet")),
      state,
      el("p", { class: "muted" }, `Unsigned, ${what} lapses in `, countdown(Date.parse(signing.expiresAt)), "."))
    const poller = setInterval(async () => {
      if (Date.now() >= Date.parse(signing.expiresAt)) {
        clearInterval(poller)
        return setState("expired", "Your wallet did not sign in time: the post lapsed and was not published.", "error")
      }
      let found
      try {
        found = action === "publish"
          ? await api(`/api/public/post/${encodeURIComponent(postId)}`)
          : await api(`/api/social/posts/${encodeURIComponent(postId)}/wallet-signing`).then(() => undefined, (e) => {
            if (e instanceof ApiError && e.status === 404) return {} // nothing waits: signed
            throw e
          })
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return
        return setState("waiting", `Still waiting for your wallet; the service did not answer just now (${e.message})`)
      }
      if (found === undefined) return // the change still waits
      clearInterval(poller)
      setState("signed", "Signed by your wallet. The stamps are on their way to the ledger.", "ok")
      area.replaceChildren(state)
      onSigned(found.proof)
    }, signing.pollIntervalMs)
  }
  start()
  return area
}

const proofPanel = (receipt, onSigned) => {
  const page = `/p/${encodeURIComponent(receipt.shortId)}`
  const embed = `/embed/p/${encodeURIComponent(receipt.shortId)}`
  const stamping = el("p", { "data-field": "stamping" }, stampingSentence(receipt))
  const txHash = el("dd", { class: "mono", "data-field": "txHash" }, receipt.txHash ?? "pending")
  const opReturn = el("dd", { class: "mono", "data-field": "opReturn" }, receipt.opReturn ?? "pending")
  const signed = (proof) => {
    txHash.textContent = proof.txHash ?? "pending"
    opReturn.textContent = proof.opReturn ?? "pending"
    stamping.textContent = stampingSentence({ txHash: proof.txHash })
    onSigned?.()
  }
  return el("div", { class: "proof", id: "proof", tabindex: "-1" },
    el("h3", {}, receipt.stamping === "awaiting_signature" ? "Written: your wallet signs it" : "Published"),
    stamping,
    receipt.stamping === "awaiting_signature" ? walletSigningArea(receipt.postId, signed) : null,
    el("dl", { class: "kv" },
      el("dt", {}, "Transaction"), txHash,
      el("dt", {}, "OP_RETURN"), opReturn,
      el("dt", {}, "Content"), el("dd", { class: "mono" }, receipt.metadataCid)),
    el("p", {}, el("a", { href: page, "data-link": "page" }, "Open the post page"), " · ", el("a", { href: embed, "data-link": "embed" }, "Open the embed")))
}

const composer = (onPublished) => {
  const body = el("textarea", { name: "body", maxlength: "10000", required: true })
  const kind = el("select", { name: "kind" }, ...["text", "story", "photo", "video"].map((k) => el("option", { value: k }, k)))
  const tags = el("input", { name: "tags", type: "text", placeholder: "news, chain", autocomplete: "off" })
  // Any file: the service types it by its bytes (HLS .ts, .m4s and .m3u8 included; unknown types are served as downloads).
  const files = el("input", { name: "media", type: "file", multiple: true })
  const progress = el("progress", { max: "1", value: "0", "aria-label": "Upload progress", hidden: true })
  const status = notice()
  const result = el("div")
  const publish = el("button", { type: "submit" }, "Publish")
  const form = el("form", { novalidate: true, onsubmit: async (e) => {
    e.preventDefault()
    if (body.value.trim() === "" && files.files.length === 0) return status.error("Write something or add a media file first.")
    publish.disabled = true
    result.replaceChildren()
    try {
      const media = []
      for (const [i, file] of [...files.files].entries()) {
        progress.hidden = false
        status.info(`Uploading ${file.name} (${i + 1} of ${files.files.length})…`)
        const receipt = await upload("/api/social/upload", file, (f) => { progress.value = (i + f) / files.files.length })
        media.push(receipt.cid)
      }
      progress.value = 1
      status.info("Publishing and stamping…")
      const receipt = await api("/api/social/posts", { method: "POST", body: {
        body: body.value, kind: kind.value, media,
        tags: tags.value.split(",").map((t) => t.trim()).filter((t) => t !== "")
      } })
      status.info(receipt.stamping === "awaiting_signature" ? "Written. Your wallet signs its stamps next." : "Published.")
      result.replaceChildren(proofPanel(receipt, onPublished))
      result.querySelector("#proof").focus()
      form.reset()
      progress.hidden = true
      onPublished()
    } catch (err) {
      status.error(err)
    } finally {
      publish.disabled = false
    }
  } },
  field("What is new?", body), field("Kind", kind), field("Tags", tags, "Comma separated, up to 20"),
  field("Media", files, "Images, video, audio, HLS segments and playlists, or any file (served as a download); uploaded to this service's content store"), progress, publish, status)
  return section("Compose", form, result)
}

/** What a renewal or takedown answered: done (200), or stamps the member's wallet must sign first (202). */
const changeSentence = (action, answer) => {
  if (answer?.stamps) return `The ${action === "renew" ? "renewal" : "takedown"} waits for your wallet: sign its stamp there before ${new Date(answer.expiresAt).toLocaleString()}.`
  return action === "renew" ? "Hosting renewed for another period." : "The post was taken down."
}

/** A post's hosting state in words (MyPost.state), with the date its hosting is paid until where it matters. */
const hostingLine = (p) => {
  const until = new Date(p.paidUntil).toLocaleDateString()
  switch (p.state) {
    case "hosted": return `Hosted until ${until}`
    case "grace": return `Hosting ran out on ${until}: in its grace period, renew to keep it`
    case "unpinned": return "No longer hosted (not renewed)"
    case "taken_down": return "Taken down by you"
    case "moderated": return "Removed by a moderator"
    case "awaiting_signature": return "Waiting for your wallet's signature on its stamp"
    default: return p.state.replaceAll("_", " ")
  }
}

/** The member's posts; `status` outlives the list (it is rebuilt after each action), so its sentence stays. */
const postsSection = (posts, reload, status, signing) => {
  const act = (post, action) => async (e) => {
    e.target.disabled = true
    try {
      const answer = await api(`/api/social/posts/${encodeURIComponent(post.id)}/${action}`, { method: "POST" })
      status.info(changeSentence(action, answer))
      // A wallet-signed post's change waits for its stamps: the page hands them to the wallet.
      signing.replaceChildren(answer?.stamps ? walletSigningArea(post.id, () => reload().catch(() => {}), action) : "")
      await reload()
    } catch (err) {
      e.target.disabled = false
      status.error(err)
    }
  }
  const rows = posts.length === 0
    ? [el("li", {}, "No posts yet.")]
    : posts.map((p) => el("li", { "data-post": p.shortId, "data-state": p.state, "data-paid-until": p.paidUntil },
      el("div", {},
        el("a", { href: `/p/${encodeURIComponent(p.shortId)}` }, p.body || `(${p.kind})`),
        el("div", { class: "muted", "data-field": "hosting" }, hostingLine(p))),
      el("div", {},
        ["hosted", "grace"].includes(p.state) ? el("button", { type: "button", class: "secondary", onclick: act(p, "renew") }, "Renew") : null,
        ["hosted", "grace"].includes(p.state) ? el("button", { type: "button", class: "danger", onclick: act(p, "takedown") }, "Take down") : null)))
  return section("Your posts", el("ul", { class: "rows" }, ...rows), status, signing)
}

/** The balance and where to top it up; `update` shows a new balance (publishing and renewing spend it). */
const balanceSection = async (me) => {
  const balance = el("strong", { "data-field": "balance" }, me.balance)
  const node = section("Balance",
    el("p", {}, "On-service balance: ", balance, " (pays for posting and hosting)."),
    el("p", {}, "Top up by paying this address from your identity address:"),
    el("p", { class: "mono", "data-field": "topUpAddress" }, me.topUpAddress),
    await qrCode(me.topUpAddress, "QR code of the top-up address"))
  return { node, update: (next) => { balance.textContent = next.balance } }
}

/**
 * For an account signing in made (no xpub yet): link the wallet by its QR, so the service can derive
 * each post's address; the wallet keeps its keys and signs each stamp itself.
 */
const walletLinkSection = (onLinked) => {
  const qr = linkQr({
    create: () => api("/api/social/wallet-link", { method: "POST" }),
    stateOf: (id) => api(`/api/social/wallet-link/${encodeURIComponent(id)}`),
    linkedText: "Linked. You can post now; your wallet signs each post's stamp.",
    onLinked
  })
  return section("Link your wallet",
    el("p", {}, "Before your first post, link your wallet: it shares its extended public key (watch-only: it cannot move funds), from which each post gets its own address. Your wallet keeps its keys and signs each stamp."),
    el("form", { onsubmit: (e) => { e.preventDefault(); qr.start() } }, el("p", {}, el("button", { type: "submit" }, "Link your wallet"))),
    qr.area, qr.status)
}

const home = async () => {
  const session = await requireSession()
  const main = shell(title, session)
  const posts = el("div")
  const status = notice()
  // Kept across the list's rebuilds, like `status`: a change's wallet-signing QR stays while the list refreshes.
  const signing = el("div", { "data-area": "change-signing" })
  let balance
  let shownPosts = ""
  const load = async () => {
    const me = await api("/api/social/me")
    // The list is rebuilt only when it changed: a poll must not take the focus from its buttons.
    const next = JSON.stringify(me.posts)
    if (next !== shownPosts) posts.replaceChildren(postsSection(me.posts, load, status, signing))
    shownPosts = next
    balance?.update(me)
    return me
  }
  const me = await load()
  balance = await balanceSection(me)
  main.append(el("h1", {}, me.handle ? `@${me.handle}` : `#${me.assetId ?? ""}`),
    ...(me.xpubLinked ? [] : [walletLinkSection(() => load().catch(() => {}))]),
    composer(() => load().catch(() => {})), posts, balance.node, sessionsSection())
  setInterval(() => load().catch((e) => status.error(e)), ME_POLL_MS)
}

run(location.pathname.startsWith("/app/sign-in") ? () => signInPage(title) : home)
