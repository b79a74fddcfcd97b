// An upload into the content store, typed by its bytes (mediaTypes.ts): the first `sniffBytes`
// are read off the stream, the type decided, then the whole stream stored under that type. The
// composer's upload route and the CLI's `social post --media` both store media this way.
import { Data, Effect, Either, Sink, Stream } from "effect"
import { ContentStore } from "./ContentStore.ts"
import { mediaTypeOf, sniffBytes } from "./mediaTypes.ts"

/** Active content (HTML, SVG, XML, script), declared or sniffed: never stored. */
export class MediaRefused extends Data.TaggedError("MediaRefused")<{ readonly message: string }> {}

interface Head {
  readonly pieces: Array<Uint8Array>
  size: number
}

/** Stores `bytes` (at most `limit`) under the type its head and `declared` decide. */
export const putMedia = <E>(bytes: Stream.Stream<Uint8Array, E>, declared: string | undefined, limit?: number) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* ContentStore
    const [head, rest] = yield* Stream.peel(bytes, Sink.fold<Head, Uint8Array>(
      { pieces: [], size: 0 },
      (h) => h.size < sniffBytes,
      (h, piece) => {
        h.pieces.push(piece)
        h.size += piece.length
        return h
      }
    ))
    const type = mediaTypeOf(declared, Buffer.concat(head.pieces).subarray(0, sniffBytes))
    if (Either.isLeft(type)) return yield* new MediaRefused({ message: type.left })
    return yield* store.put(Stream.concat(Stream.fromIterable(head.pieces), rest), type.right, limit)
  }))
