/**
 * Tabs of one browser in step: a login, logout or session end in one tab is announced to the others
 * (BroadcastChannel, or a localStorage 'storage' event where it is missing). Client only.
 */

/**
 * 'login', 'logout', 'ended' (the session's end passed here); 'gone': a tab started without a session (a logout by a
 * plain link or a typed /auth/logout, in this tab or elsewhere): the others check with the server.
 */
export type AuthChange = 'login' | 'logout' | 'ended' | 'gone'

const CHANNEL = 'svc-auth'
const STORAGE_KEY = 'svc:auth:change'

let channel: BroadcastChannel | null | undefined

function useChannel(): BroadcastChannel | null {
  if (channel === undefined) channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : null
  return channel
}

/** Tells the other tabs of this browser that the session changed here. */
export function announceAuthChange(change: AuthChange): void {
  if (typeof window === 'undefined') return
  const open = useChannel()
  if (open) return open.postMessage(change)
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify({ change, at: Date.now() }))
  }
  catch { /* storage refused (private mode): this tab alone knows */ }
}

/** Calls `listener` when another tab announces a change; returns what stops listening. */
export function onAuthChange(listener: (change: AuthChange) => void): () => void {
  const isChange = (value: unknown): value is AuthChange => value === 'login' || value === 'logout' || value === 'ended' || value === 'gone'
  const open = useChannel()
  if (open) {
    const onMessage = (event: MessageEvent) => {
      if (isChange(event.data)) listener(event.data)
    }
    open.addEventListener('message', onMessage)
    return () => open.removeEventListener('message', onMessage)
  }
  const onStorage = (event: StorageEvent) => {
    if (event.key !== STORAGE_KEY || !event.newValue) return
    try {
      const { change } = JSON.parse(event.newValue) as { change?: unknown }
      if (isChange(change)) listener(change)
    }
    catch { /* not ours */ }
  }
  window.addEventListener('storage', onStorage)
  return () => window.removeEventListener('storage', onStorage)
}
