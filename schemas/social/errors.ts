// The social API's error body (the spec leaves it "not shown"): the desk's convention,
// `{"error": {"code", "message"}}`. Shared statuses in schemas/common/ErrorBody.ts; the social
// API's own 401 here.
import { errorClass } from "../common/ErrorBody.ts"

export { BadRequest, Conflict, Gone, HeadersTooLarge, MethodNotAllowed, NotFound, PayloadTooLarge, RequestTimeout, ServiceUnavailable, TooManyRequests } from "../common/ErrorBody.ts"

export class Unauthorized extends errorClass<Unauthorized>()(
  "Unauthorized", 401, ["invalid_session", "invalid_signature"],
  "The session token is missing, unknown, expired or revoked (invalid_session: Authorization: Bearer <token> or the session cookie), or a wallet signature does not verify (invalid_signature)"
) {}
