// The desk's error body (the spec leaves it "not shown"): `{"error": {"code", "message"}}`, as
// Stripe answers, matching the desk's Stripe-style callbacks and the spec's own code name
// `unknown_signer`. The statuses shared with the social API are in schemas/common/ErrorBody.ts;
// the desk's own are here.
import { errorClass } from "../common/ErrorBody.ts"

export { BadRequest, Conflict, Gone, HeadersTooLarge, IdempotencyKeyReused, MethodNotAllowed, NotFound, PayloadTooLarge, RequestTimeout, ServiceUnavailable, TooManyRequests, idempotencyKeyReused, unavailable } from "../common/ErrorBody.ts"

export class Unauthorized extends errorClass<Unauthorized>()(
  "Unauthorized", 401, ["invalid_api_key", "invalid_signature", "invalid_webhook_secret", "invalid_session"],
  "The API key is missing, unknown or revoked (invalid_api_key: x-api-key or Authorization: Bearer <API_KEY>), a wallet signature does not verify (invalid_signature), a webhook's partner secret is missing or wrong (invalid_webhook_secret), or the web app's session is missing, unknown, expired or revoked (invalid_session)"
) {}

export class Forbidden extends errorClass<Forbidden>()(
  "Forbidden", 403, ["insufficient_scope", "unknown_signer", "cross_site_refused"],
  "The key lacks the scope this route needs (insufficient_scope), a new wallet tries to replace the linked one without the link token's consent (unknown_signer), or a change on a browser session did not come from this site's pages as JSON and carries no CSRF token (cross_site_refused)"
) {}
