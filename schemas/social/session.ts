// The social session routes (ours): who the session is, sign out, the address's sessions.
import { sessionGroup } from "../common/signIn.ts"
import { NotFound } from "../common/ErrorBody.ts"
import { SessionAuth } from "./security.ts"

export { SessionView } from "../common/signIn.ts"

export const SessionGroup = sessionGroup(SessionAuth, NotFound)
