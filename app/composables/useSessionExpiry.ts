import { computed, onBeforeUnmount, onMounted, ref } from 'vue'
import { useAuthExpiresAt } from '../lib/auth-state'

/**
 * When the session ends, ticking once a second in the browser: `expiresAt` (ms), `remainingMs`, `expiringSoon`
 * (within the app config's `svcAuth.expiryWarningMinutes`, default 5) and `expired`. For a banner such as the
 * playground's; the route guard sends an ended session to the login page at the next navigation.
 */
export function useSessionExpiry() {
  const expiresAt = useAuthExpiresAt()
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

  const remainingMs = computed(() => (expiresAt.value === null ? null : Math.max(0, expiresAt.value - now.value)))
  return {
    expiresAt: computed(() => expiresAt.value),
    remainingMs,
    expiringSoon: computed(() => remainingMs.value !== null && remainingMs.value > 0 && remainingMs.value <= warningMs),
    expired: computed(() => remainingMs.value === 0),
  }
}
