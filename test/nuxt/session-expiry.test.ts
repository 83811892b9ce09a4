import { mountSuspended, registerEndpoint } from '@nuxt/test-utils/runtime'
import { getRequestHeader } from 'h3'
import { afterEach, describe, expect, it } from 'vitest'
import { defineComponent, h } from 'vue'
import { useAuth } from '../../app/composables/useAuth'
import { useSessionExpiry } from '../../app/composables/useSessionExpiry'
import type { AuthUser } from '../../shared/types'

const sale: AuthUser = { id: 'u-sale', name: 'Lê Bán Hàng', email: 's@x.vn', roles: ['sale'], permissions: [] }
const MINUTE = 60_000

afterEach(() => {
  document.cookie = 'svc_idle=; Max-Age=0; Path=/'
})

/** useSessionExpiry() as a mounted component sees it. */
async function expiry() {
  let state!: ReturnType<typeof useSessionExpiry>
  await mountSuspended(defineComponent({ setup: () => (state = useSessionExpiry(), () => h('div')) }))
  return state
}

describe('useSessionExpiry knows both limits (issue 41, item 1)', () => {
  it('ends at the idle end when it comes first, and at the 8-hour end otherwise', async () => {
    const now = Date.now()
    registerEndpoint('/auth/session', () => ({ user: sale, expiresAt: now + 60 * MINUTE, idleExpiresAt: now + 3 * MINUTE }))
    await useAuth().refresh()
    const state = await expiry()
    expect(state.expiresAt.value).toBe(now + 3 * MINUTE)
    expect(state.endsBy.value).toBe('idle')
    expect(state.expiringSoon.value).toBe(true)
    registerEndpoint('/auth/session', () => ({ user: sale, expiresAt: now + 2 * MINUTE, idleExpiresAt: now + 3 * MINUTE }))
    await useAuth().refresh()
    expect(state.expiresAt.value).toBe(now + 2 * MINUTE)
    expect(state.endsBy.value).toBe('end')
  })

  it('follows another tab\'s activity through the svc_idle cookie, without a request', async () => {
    const now = Date.now()
    registerEndpoint('/auth/session', () => ({ user: sale, expiresAt: now + 60 * MINUTE, idleExpiresAt: now + 3 * MINUTE }))
    await useAuth().refresh()
    const state = await expiry()
    expect(state.expiringSoon.value).toBe(true)
    document.cookie = `svc_idle=${now + 30 * MINUTE}; Path=/`
    await expect.poll(() => state.expiresAt.value, { timeout: 3_000 }).toBe(now + 30 * MINUTE)
    expect(state.expiringSoon.value).toBe(false)
    // An older time in the cookie (this tab already knows a later one) moves nothing back.
    document.cookie = `svc_idle=${now + MINUTE}; Path=/`
    await new Promise(resolve => setTimeout(resolve, 1_100))
    expect(state.expiresAt.value).toBe(now + 30 * MINUTE)
  })

  it('without the gateway\'s idle timeout, is the session\'s end alone', async () => {
    const now = Date.now()
    registerEndpoint('/auth/session', () => ({ user: sale, expiresAt: now + 60 * MINUTE }))
    await useAuth().refresh()
    const state = await expiry()
    expect(state.expiresAt.value).toBe(now + 60 * MINUTE)
    expect(state.endsBy.value).toBe('end')
    expect(useAuth().idleExpiresAt.value).toBeNull()
  })

  it('refresh({ peek: true }) asks with X-Session-Peek, which the gateway does not count as activity', async () => {
    const peeks: (string | undefined)[] = []
    registerEndpoint('/auth/session', (event) => {
      peeks.push(getRequestHeader(event, 'x-session-peek'))
      return { user: sale, expiresAt: Date.now() + MINUTE }
    })
    await useAuth().refresh({ peek: true })
    await useAuth().refresh()
    expect(peeks).toEqual(['1', undefined])
  })
})
