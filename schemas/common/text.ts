// A string with a length limit (TigerBeetle's rule: a limit on everything a client sends).
import { Schema } from "effect"

export const text = (maxLength: number) => Schema.String.pipe(Schema.maxLength(maxLength))
