import { executionAsyncResource } from 'node:async_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { keepTickShape } from '../../server/ops/tick-shape'

// V8's own view of hidden classes, and full collections on demand (this test file runs in a process of its own).
setFlagsFromString('--allow-natives-syntax')
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void
// `%HaveSameMap` is V8 syntax: only code compiled after the flag can use it.
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean

/** The entry Node made for a new process.nextTick, seen from inside its callback. */
function nextTickEntry(): Promise<object> {
  return new Promise(resolve => process.nextTick(() => resolve(executionAsyncResource())))
}

describe('keepTickShape', () => {
  it('keeps one of Node\'s nextTick entries, always the same one', async () => {
    const kept = await keepTickShape()
    // Node's entry literal: its async id and trigger id (and from Node 22 on, its async context frame), then these.
    expect(Object.getOwnPropertySymbols(kept).length).toBeGreaterThanOrEqual(2)
    expect(Object.getOwnPropertySymbols(kept)).toHaveLength(Object.getOwnPropertySymbols(await nextTickEntry()).length)
    expect(Object.keys(kept)).toEqual(['callback', 'args'])
    expect(await keepTickShape()).toBe(kept)
  })

  it('keeps the entries\' hidden class through the full collections of an idle spell', async () => {
    const kept = await keepTickShape()
    for (let i = 0; i < 4; i++) {
      await new Promise(resolve => setTimeout(resolve, 10))
      collectGarbage()
    }
    // A new entry takes the kept entry's class: the transitions that make it were not dropped.
    expect(haveSameMap(kept, await nextTickEntry())).toBe(true)
  })
})
