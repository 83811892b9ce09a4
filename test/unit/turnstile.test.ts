import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Turnstile } from '../../server/core/proxy/turnstile'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

/** Admits one holder, recording what happened to it. */
function arrive(turnstile: Turnstile, log: string[], name: string) {
  return turnstile.admit(() => log.push(`${name} in`), () => log.push(`${name} refused`))
}

describe('Turnstile (the proxy\'s backend connections)', () => {
  it('lets `size` in at once, the rest in arrival order as holders leave', () => {
    const turnstile = new Turnstile(2, 1_000)
    const log: string[] = []
    for (const name of ['a', 'b', 'c', 'd']) arrive(turnstile, log, name)
    expect(log).toEqual(['a in', 'b in'])
    expect([turnstile.busy, turnstile.waiting]).toEqual([2, 2])
    turnstile.release()
    expect(log).toEqual(['a in', 'b in', 'c in'])
    turnstile.release()
    turnstile.release()
    expect(log).toEqual(['a in', 'b in', 'c in', 'd in'])
    expect([turnstile.busy, turnstile.waiting]).toEqual([1, 0])
  })

  it('refuses a waiter whose wait ran out, and only it', () => {
    const turnstile = new Turnstile(1, 1_000)
    const log: string[] = []
    arrive(turnstile, log, 'a')
    arrive(turnstile, log, 'b')
    vi.advanceTimersByTime(500)
    arrive(turnstile, log, 'c')
    vi.advanceTimersByTime(500)
    expect(log).toEqual(['a in', 'b refused'])
    turnstile.release()
    expect(log).toEqual(['a in', 'b refused', 'c in'])
    vi.advanceTimersByTime(5_000)
    expect(log).toEqual(['a in', 'b refused', 'c in'])
    expect([turnstile.busy, turnstile.waiting]).toEqual([1, 0])
  })

  it('skips a waiter that gave up, and gives its place to the next', () => {
    const turnstile = new Turnstile(1, 1_000)
    const log: string[] = []
    arrive(turnstile, log, 'a')
    const leaveB = arrive(turnstile, log, 'b')
    arrive(turnstile, log, 'c')
    leaveB()
    leaveB()
    expect(turnstile.waiting).toBe(1)
    turnstile.release()
    vi.advanceTimersByTime(5_000)
    expect(log).toEqual(['a in', 'c in'])
  })

  it('leaves nothing behind for one let in at once', () => {
    const turnstile = new Turnstile(1, 1_000)
    const log: string[] = []
    const leave = arrive(turnstile, log, 'a')
    leave()
    expect([turnstile.busy, turnstile.waiting]).toEqual([1, 0])
    turnstile.release()
    expect([turnstile.busy, turnstile.waiting]).toEqual([0, 0])
  })
})
