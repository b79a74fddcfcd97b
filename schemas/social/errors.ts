// The social API's error body (the spec leaves it "not shown"): the desk's convention,
// `{"error": {"code", "message"}}`. Shared statuses in schemas/common/ErrorBody.ts; the social
// API's own 401 here.
import { errorClass } from "../common/ErrorBody.ts"

export { BadRequest, Conflict, Gone, HeadersTooLarge, IdempotencyKeyReused, MethodNotAllowed, NotFound, PayloadTooLarge, RequestTimeout, ServiceUnavailable, TooManyRequests, idempotencyKeyReused, unavailable } from "../common/ErrorBody.ts"

export class Unauthorized extends errorClass<Unauthorized>()(
  "Unauthorized", 401, ["invalid_session", "invalid_signature"],
  "The session token is missing, unknown, expired or revoked (invalid_session: Authorization: Bearer <token> or the session cookie), or a wallet signature does not verify (invalid_signature)"
) {}

// Social content (issue 14; statuses where the spec says "not shown", docs/social.md).

export class PaymentRequired extends errorClass<PaymentRequired>()(
  "PaymentRequired", 402, ["insufficient_balance"], "The on-service balance does not cover this writing action"
) {}

export class Forbidden extends errorClass<Forbidden>()(
  "Forbidden", 403, ["not_author", "no_service_key", "cross_site_refused", "media_blocked"],
  "Not this session's post (not_author), an account whose keys the service does not hold (no_service_key), a change on a browser session that did not come from this site's pages as JSON and carries no CSRF token (cross_site_refused), or a post naming media a moderator pulled (media_blocked)"
) {}

// Content's own 409 and 410 beside the common ones (wallet link, sign-in): one class per code family.
export class ContentConflict extends errorClass<ContentConflict>()(
  "ContentConflict", 409, ["post_closed", "countdown_exists", "no_countdown", "signature_pending", "nothing_to_sign", "signatures_expired"],
  "The post was taken down or pulled and cannot change (post_closed); a recovery countdown already runs or completed (countdown_exists), or none runs (no_countdown); member-signed posts: another action waits for signatures (signature_pending), none waits (nothing_to_sign), or its window ended (signatures_expired)"
) {}

export class ContentGone extends errorClass<ContentGone>()(
  "ContentGone", 410, ["unpinned", "content_blocked"],
  "The content was unpinned from the gateway (hosting ended, taken down; unpinned), or a moderator pulled it and it is served under no post until an operator lifts the block (content_blocked); its CID and chain record survive"
) {}

export class ContentTooLarge extends errorClass<ContentTooLarge>()(
  "ContentTooLarge", 413, ["content_too_large"], "The upload is over SHARDLINE_SOCIAL_CONTENT_BYTES_MAX"
) {}

export class UnsupportedMediaType extends errorClass<UnsupportedMediaType>()(
  "UnsupportedMediaType", 415, ["unsupported_media_type"], "The upload is HTML, SVG, XML or script (declared or by its bytes): served from this origin it could run script"
) {}

export class NotImplemented extends errorClass<NotImplemented>()(
  "NotImplemented", 501, ["not_implemented"], "oEmbed format=xml (oEmbed 1.0 §2.2: a provider may answer 501 for a format it does not support)"
) {}

