// A full garbage collection of this process, on demand, without starting node with --expose-gc:
// tests that show a bug depending on what a collection takes (a timeout signal held only weakly,
// nodejs/node#57736) run one at the moment that matters instead of waiting for load to cause it.
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

let gc: (() => void) | undefined

export const collectGarbage = (): void => {
  if (gc === undefined) {
    setFlagsFromString("--expose-gc")
    gc = runInNewContext("gc") as () => void
  }
  gc()
}
