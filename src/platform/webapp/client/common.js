// The web apps' shared browser code (bundled per service by src/platform/webapp/WebApp.ts, no
// CDN): the API client (JSON, the session's CSRF token, errors as sentences), a tiny DOM builder,
// QR codes (the maintained `qrcode` library, as SVG), the wallet sign-in page of every listener,
// and the session panel (sign out, end other sessions). Plain JavaScript: it runs in the browser.
import QRCode from "qrcode"

let csrfToken = ""

/** An error from the API, always with a sentence a person can read. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

/**
 * The API's message as a sentence: a capital first letter (unless it begins with a name such as
 * `callbackUrl` or `SHRD`) and a full stop.
 */
export const asSentence = (message) => {
  const text = message.trim()
  const capital = /^[a-z]+\b/.test(text) ? text[0].toUpperCase() + text.slice(1) : text
  return /[.!?)]$/.test(capital) ? capital : `${capital}.`
}

const sentenceOf = (status, body) => {
  const message = body?.error?.message ?? body?.msg
  if (typeof message === "string" && message.trim() !== "") return asSentence(message)
  if (status === 0) return "The service cannot be reached; check the connection and try again."
  return `The service answered ${status} without an explanation; please try again.`
}

/** Calls the listener's own API; a JSON body unless `raw` (then `type` is its Content-Type). */
export const api = async (path, { method = "GET", body, raw, type } = {}) => {
  const headers = { accept: "application/json" }
  if (method !== "GET" && csrfToken !== "") headers["x-csrf-token"] = csrfToken
  let payload
  if (raw !== undefined) {
    payload = raw
    headers["content-type"] = type || "application/octet-stream"
  } else if (body !== undefined) {
    payload = JSON.stringify(body)
    headers["content-type"] = "application/json"
  }
  let response
  try {
    response = await fetch(path, { method, headers, body: payload, credentials: "same-origin" })
  } catch {
    throw new ApiError(0, sentenceOf(0))
  }
  const text = await response.text()
  let json
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  if (!response.ok) throw new ApiError(response.status, sentenceOf(response.status, json))
  return json
}

/** An upload with progress (fetch cannot report it): resolves with the JSON answer. */
export const upload = (path, file, onProgress) =>
  new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open("POST", path)
    xhr.setRequestHeader("content-type", file.type || "application/octet-stream")
    if (csrfToken !== "") xhr.setRequestHeader("x-csrf-token", csrfToken)
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total)
    xhr.onload = () => {
      let json
      try {
        json = JSON.parse(xhr.responseText)
      } catch {
        json = undefined
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(json)
      else reject(new ApiError(xhr.status, sentenceOf(xhr.status, json)))
    }
    xhr.onerror = () => reject(new ApiError(0, sentenceOf(0)))
    xhr.send(file)
  })

/** el("button", {type: "button", onclick}, "text", child…): attributes, properties for on*, children. */
export const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v)
    else if (k === "text") node.textContent = v
    else node.setAttribute(k, v === true ? "" : String(v))
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) node.append(c instanceof Node ? c : String(c))
  return node
}

/** A QR code of `text` as an inline SVG element, labelled for screen readers. */
export const qrCode = async (text, label) => {
  const svg = await QRCode.toString(text, { type: "svg", errorCorrectionLevel: "M", margin: 2 })
  const box = el("div", { class: "qr", role: "img", "aria-label": label, "data-qr": text })
  box.innerHTML = svg
  return box
}

/** A live region for one message; error() and info() replace it. */
export const notice = () => {
  const box = el("p", { class: "notice", role: "status", "aria-live": "polite" })
  return Object.assign(box, {
    error: (e) => { box.className = "notice error"; box.textContent = e instanceof Error ? e.message : String(e) },
    info: (text) => { box.className = "notice"; box.textContent = text },
    clear: () => { box.className = "notice"; box.textContent = "" }
  })
}

export const section = (title, ...children) => {
  const id = `h-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`
  return el("section", { "aria-labelledby": id }, el("h2", { id }, title), ...children)
}

export const field = (label, input, hint) => {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`
  input.id = id
  return el("div", { class: "field" }, el("label", { for: id }, label), input, hint ? el("small", {}, hint) : null)
}

export const countdown = (untilMs, onDone) => {
  const out = el("span", { class: "countdown", "aria-live": "off" })
  const tick = () => {
    const left = Math.max(0, Math.floor((untilMs - Date.now()) / 1000))
    const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60
    out.textContent = h > 0 ? `${h}h ${String(m).padStart(2, "0")}m ${String(s).padStart(2, "0")}s` : `${m}:${String(s).padStart(2, "0")}`
    if (left === 0) {
      clearInterval(timer)
      onDone?.()
    }
  }
  const timer = setInterval(tick, 1000)
  tick()
  return out
}

/** The page shell: header with the service name and, once signed in, the address and sign-out. */
export const shell = (title, session) => {
  const main = el("main", { id: "main", tabindex: "-1" })
  const nav = el("header", { class: "top" },
    el("a", { href: "/app/", class: "brand" }, `Shardline ${title}`),
    session ? el("span", { class: "who", title: session.address }, session.address) : null,
    session ? el("button", { type: "button", class: "link", onclick: signOut }, "Sign out") : null)
  document.body.replaceChildren(el("a", { href: "#main", class: "skip" }, "Skip to content"), nav, main)
  return main
}

const signOut = async () => {
  try {
    await api("/api/public/auth/sign-out", { method: "POST" })
  } finally {
    location.assign("/app/sign-in")
  }
}

/** The session, or a redirect to sign-in. */
export const requireSession = async () => {
  try {
    const s = await api("/api/public/v1/session")
    csrfToken = s.csrfToken
    return s
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      location.assign("/app/sign-in")
      return new Promise(() => {})
    }
    throw e
  }
}

/** The wallet sign-in (the social spec's flow): QR `wl-login`, deep link, status every 2 s, one-time token → session. */
export const signInPage = async (title) => {
  const main = shell(title)
  const status = notice()
  const area = el("div", { class: "signin" })
  main.append(el("h1", {}, `Sign in to ${title}`),
    el("p", {}, "Scan the code with your Shardline wallet, or open it in the wallet on this device. Signing proves you hold the address; nothing is paid."),
    area, status)
  let poller
  const start = async () => {
    clearInterval(poller)
    status.clear()
    area.replaceChildren(el("p", {}, "Preparing a sign-in code…"))
    let challenge
    try {
      challenge = await api("/api/public/auth/wallet-challenge", { method: "POST" })
    } catch (e) {
      area.replaceChildren(el("button", { type: "button", onclick: start }, "Try again"))
      return status.error(e)
    }
    const qr = await qrCode(JSON.stringify(challenge.qr), "Sign-in QR code for your wallet")
    const expired = () => {
      clearInterval(poller)
      area.replaceChildren(el("p", { class: "error" }, "This sign-in code has expired (codes last 5 minutes)."),
        el("button", { type: "button", onclick: start, autofocus: true }, "Get a new code"))
      area.querySelector("button").focus()
    }
    area.replaceChildren(qr,
      el("p", {}, el("a", { href: challenge.deepLink, class: "button" }, "Open in wallet")),
      el("p", {}, "The code expires in ", countdown(Date.parse(challenge.expiresAt)), "."),
      el("p", { class: "muted", "data-challenge": challenge.id }, `Challenge ${challenge.id}`))
    status.info("Waiting for your wallet to sign…")
    poller = setInterval(async () => {
      let s
      try {
        s = await api(`/api/public/auth/wallet-status?id=${encodeURIComponent(challenge.id)}`)
      } catch (e) {
        clearInterval(poller)
        if (e instanceof ApiError && e.status === 410) return expired()
        return status.error(e)
      }
      if (s.status === "expired" || s.status === "used") return expired()
      if (s.status === "signed" && s.token) {
        clearInterval(poller)
        status.info("Signed. Opening your account…")
        try {
          await api("/api/public/auth/wallet-exchange", { method: "POST", body: { token: s.token } })
          location.assign("/app/")
        } catch (e) {
          status.error(e)
          area.append(el("button", { type: "button", onclick: start }, "Start again"))
        }
      }
    }, challenge.pollIntervalMs)
  }
  await start()
}

/**
 * A wallet-link QR with its live state (desk and social): `create()` asks for a new single-use code
 * ({challengeId, url, deepLink, expiresAt, pollIntervalMs}), `stateOf(id)` reads its state, polled at
 * the code's own rate; `linkedText` is said once the wallet linked, then `onLinked(state)` runs. The
 * state line carries data-state (preparing, waiting, linked, expired, refused) for people and tests.
 */
export const linkQr = ({ create, stateOf, onLinked, linkedText }) => {
  const area = el("div", { class: "link-qr" })
  const status = notice()
  let poller
  const start = async () => {
    clearInterval(poller)
    status.clear()
    area.replaceChildren(el("p", { class: "link-state", "data-state": "preparing", role: "status" }, "Preparing a link code…"))
    let qr
    try {
      qr = await create()
    } catch (e) {
      area.replaceChildren()
      return status.error(e)
    }
    const state = el("p", { class: "link-state", "data-state": "waiting", role: "status" }, "Waiting for your wallet to scan the code…")
    const setState = (name, text, cls) => {
      state.dataset.state = name
      state.className = `link-state ${cls ?? ""}`
      state.textContent = text
    }
    area.replaceChildren(
      await qrCode(qr.url, "Wallet-link QR code"),
      el("p", {}, el("a", { href: qr.deepLink, class: "button" }, "Open in wallet")),
      state,
      el("p", { class: "muted" }, "The code works once and expires in ", countdown(Date.parse(qr.expiresAt)), "."))
    poller = setInterval(async () => {
      let s
      try {
        s = await stateOf(qr.challengeId)
      } catch (e) {
        clearInterval(poller)
        return status.error(e)
      }
      if (s.status === "waiting") return
      clearInterval(poller)
      if (s.status === "linked") {
        setState("linked", linkedText, "ok")
        area.replaceChildren(state)
        onLinked(s)
      } else {
        setState(s.status, s.status === "expired"
          ? "This link code has expired (codes last 5 minutes)."
          : "This link code was refused too often and no longer works.", "error")
        area.replaceChildren(state, el("button", { type: "button", onclick: start }, "Get a new code"))
      }
    }, qr.pollIntervalMs)
  }
  return { area, status, start }
}

/** This address's sessions here, each with a way to end it. */
export const sessionsSection = () => {
  const list = el("ul", { class: "rows" })
  const status = notice()
  const load = async () => {
    try {
      const { sessions } = await api("/api/public/v1/sessions")
      list.replaceChildren(...sessions.map((s) => el("li", {},
        el("span", {}, `${s.current ? "This browser" : "Session"} ${s.id}, signed in ${new Date(s.createdAt).toLocaleString()}`),
        el("button", { type: "button", class: "secondary", onclick: async () => {
          try {
            await api(`/api/public/v1/sessions/${s.id}`, { method: "DELETE" })
            if (s.current) location.assign("/app/sign-in")
            else load()
          } catch (e) {
            status.error(e)
          }
        } }, s.current ? "Sign out here" : "End this session"))))
    } catch (e) {
      status.error(e)
    }
  }
  load()
  return section("Sessions", list, status)
}

/** Runs a page, showing any failure as a sentence instead of a blank page. */
export const run = (page) => {
  page().catch((e) => {
    const main = document.getElementById("main") ?? document.body
    main.append(el("p", { class: "notice error", role: "alert" }, e instanceof Error ? e.message : String(e)))
  })
}
