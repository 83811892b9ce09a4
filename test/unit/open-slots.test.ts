import { describe, expect, it } from 'vitest'
import { OpenSlots } from '../../server/core/proxy/open-slots'

describe('OpenSlots', () => {
  it('takes a slot under every key, up to each key\'s limit, and none when any key is full', () => {
    const slots = new OpenSlots()
    const first = slots.take([['s:a', 2], ['c:ip', 3]])!
    const second = slots.take([['s:a', 2], ['c:ip', 3]])!
    expect(slots.take([['s:a', 2], ['c:ip', 3]])).toBeUndefined()
    expect(slots.count('c:ip')).toBe(2) // the refused claim took nothing
    const other = slots.take([['s:b', 2], ['c:ip', 3]])!
    expect(slots.take([['c:ip', 3]])).toBeUndefined()
    first()
    first() // given back once only
    expect(slots.count('s:a')).toBe(1)
    expect(slots.count('c:ip')).toBe(2)
    expect(slots.take([['c:ip', 3]])).toBeDefined()
    second()
    other()
    expect(slots.count('s:a')).toBe(0)
  })

  it('has no limit with 0, and holds no key with nothing open', () => {
    const slots = new OpenSlots()
    const releases = Array.from({ length: 1_000 }, () => slots.take([['c:ip', 0]])!)
    expect(slots.count('c:ip')).toBe(1_000)
    for (const release of releases) release()
    expect(slots.size).toBe(0)
  })
})
