import { computed, onBeforeUnmount, onMounted, ref } from 'vue'
import { currentSessionEnd, useAuthExpiresAt, useAuthIdleExpiresAt } from '../lib/auth-state'

/**
 * When the session ends, ticking once a second in the browser: `expiresAt` (ms: the earlier of its 8-hour or token
 * end and, with the gateway's idle timeout on, its idle end), `endsBy` ('idle' or 'end': which one comes first),
 * `remainingMs`, `expiringSoon` (within the app config's `svcAuth.expiryWarningMinutes`, default 5) and `expired`.
 * The idle end follows every tab's activity (the svc_idle cookie they share), read at each tick. For a banner such
 * as the playground's; the route guard sends an ended session to the login page at the next navigation.
 */
export function useSessionExpiry() {
  const sessionEnd = useAuthExpiresAt()
  const idleEnd = useAuthIdleExpiresAt()
  const warningMs = (useAppConfig().svcAuth?.expiryWarningMinutes ?? 5) * 60_000
  const now = ref(Date.now())
  let ticker: ReturnType<typeof setInterval> | undefined
  onMounted(() => {
    now.value = Date.now()
    ticker = setInterval(() => {
      now.value = Date.now()
    }, 1_000)
  })
  onBeforeUnmount(() => clearInterval(ticker))

  // Read again at each tick (`now`): another tab's request may have moved the idle end on.
  const expiresAt = computed(() => (void now.value, import.meta.client ? currentSessionEnd(sessionEnd, idleEnd) : earlier(sessionEnd.value, idleEnd.value)))
  const remainingMs = computed(() => (expiresAt.value === null ? null : Math.max(0, expiresAt.value - now.value)))
  return {
    expiresAt,
    endsBy: computed<'idle' | 'end' | null>(() => (expiresAt.value === null ? null : idleEnd.value !== null && idleEnd.value < (sessionEnd.value ?? Infinity) ? 'idle' : 'end')),
    remainingMs,
    expiringSoon: computed(() => remainingMs.value !== null && remainingMs.value > 0 && remainingMs.value <= warningMs),
    expired: computed(() => remainingMs.value === 0),
  }
}

function earlier(end: number | null, idle: number | null): number | null {
  return end === null ? null : idle === null ? end : Math.min(end, idle)
}
