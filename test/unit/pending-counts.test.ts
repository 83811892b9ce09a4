import { describe, expect, it } from 'vitest'
import { PendingCounts } from '../../server/core/limits/pending-counts'

function clockedPending(maxKeys = 1000) {
  let time = 1_000_000
  const pending = new PendingCounts(maxKeys, () => time)
  const advance = (ms: number) => {
    time += ms
  }
  return { pending, advance, at: (ms: number) => time + ms }
}

describe('PendingCounts', () => {
  it('keeps failures per key, less those given back, with the latest window end; a take empties it', () => {
    const { pending, at } = clockedPending()
    pending.add('u', at(60_000))
    pending.add('u', at(60_000))
    pending.add('u', at(60_000))
    pending.subtract('u')
    pending.add('ip', at(90_000))
    pending.subtract('other')
    expect(pending.take()).toEqual([
      { key: 'u', count: 2, resetAt: at(60_000), clear: false },
      { key: 'ip', count: 1, resetAt: at(90_000), clear: false },
    ])
    pending.putBack([])
    expect(pending.size).toBe(0)
    expect(pending.take()).toEqual([])
  })

  it('drops a key given back to nothing, and never goes below zero', () => {
    const { pending, at } = clockedPending()
    pending.add('u', at(60_000))
    pending.subtract('u')
    pending.subtract('u')
    expect(pending.size).toBe(0)
  })

  it('voids what came before a clear, and keeps the clear ahead of what comes after it', () => {
    const { pending, at } = clockedPending()
    pending.add('u', at(60_000))
    pending.add('u', at(60_000))
    pending.keepClear('u')
    pending.add('u', at(70_000))
    expect(pending.take()).toEqual([{ key: 'u', count: 1, resetAt: at(70_000), clear: true }])
  })

  it('forgets a key whose clear Redis took', () => {
    const { pending, at } = clockedPending()
    pending.add('u', at(60_000))
    pending.keepClear('u')
    pending.cleared('u')
    expect(pending.take()).toEqual([])
  })

  it('takes no count whose window has ended, but still the clear kept with it', () => {
    const { pending, advance, at } = clockedPending()
    pending.add('gone', at(10_000))
    pending.keepClear('cleared')
    pending.add('cleared', at(10_000))
    advance(10_000)
    expect(pending.take()).toEqual([{ key: 'cleared', count: 0, resetAt: at(0), clear: true }])
  })

  it('puts back what Redis did not take under what was kept meanwhile, counts added up', () => {
    const { pending, at } = clockedPending()
    pending.keepClear('u')
    pending.add('u', at(60_000))
    const taken = pending.take()
    pending.add('u', at(80_000))
    pending.putBack(taken)
    // The clear still goes first: it came before both counts.
    expect(pending.take()).toEqual([{ key: 'u', count: 2, resetAt: at(80_000), clear: true }])
  })

  it('puts nothing back for a key cleared since the take, kept or taken by Redis', () => {
    const { pending, at } = clockedPending()
    pending.add('kept', at(60_000))
    pending.add('taken', at(60_000))
    const taken = pending.take()
    pending.keepClear('kept')
    pending.add('kept', at(60_000))
    pending.cleared('taken')
    pending.putBack(taken)
    expect(pending.take()).toEqual([{ key: 'kept', count: 1, resetAt: at(60_000), clear: true }])
  })

  it('stays within its key bound, the oldest key making room', () => {
    const { pending, at } = clockedPending(100)
    for (let i = 0; i < 5_000; i++) pending.add(`k${i}`, at(60_000))
    expect(pending.size).toBe(100)
    expect(pending.take().map(entry => entry.key)).toEqual(Array.from({ length: 100 }, (_, i) => `k${4_900 + i}`))
  })
})
