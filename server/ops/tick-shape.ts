import { executionAsyncResource } from 'node:async_hooks'

let kept: object | undefined

/**
 * Keeps one of Node's own `process.nextTick` queue entries alive for the life of the process.
 *
 * Node builds each entry as one object literal with symbol keys (the async ids; from Node 22 on, the async context
 * frame too) before `callback` and `args` (`{ [async_id_symbol]: …, callback, args }`), a dozen times for every
 * proxied request. When a process idles, V8's memory reducer runs full collections while no such
 * entry is alive, and after two of them the entry's hidden class and its transitions are dropped. From then on the
 * literal's optimized code adds each key through the V8 runtime (`Runtime_DefineKeyedOwnPropertyInLiteral`), and the
 * process serves ~13% fewer requests for the rest of its life (bench/RESULTS.md, 2026-11-22 18:30 UTC). A live entry
 * keeps the class, so the literal keeps its fast path.
 *
 * The entry is the running async resource inside a tick's callback. Asking for it makes Node pass the resource of
 * each native callback through its JS trampoline, which costs far less than the slow path. No async hook is
 * installed (an async hook would turn off V8's fast paths for promises for good).
 * @returns the kept entry, once the tick has run
 */
export function keepTickShape(): Promise<object> {
  return new Promise((resolve) => {
    process.nextTick(() => {
      kept ??= executionAsyncResource()
      resolve(kept)
    })
  })
}
