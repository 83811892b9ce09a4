import { computed } from 'vue'
import { describeError, messagesFor, type MessageOverrides } from '../../shared/messages'
import { useAuthLocale } from '../lib/auth-state'
import { AppError } from '../utils/app-error'

/**
 * The texts of the layer's pages in their language (appConfig.svcAuth.locale), with the app's overrides
 * (appConfig.svcAuth.messages), and `describeError`: any error of a gateway route (or any thrown value) as a page
 * should show it, the contract's known errors in the page's language, the IAM's or a backend's own message as it came.
 */
export function useAuthMessages() {
  const locale = useAuthLocale()
  const overrides = useAppConfig().svcAuth?.messages as MessageOverrides | undefined
  const messages = computed(() => messagesFor(locale.value, overrides))
  return {
    locale: computed(() => locale.value),
    messages,
    describeError: (error: unknown) => describeError(messages.value, AppError.from(error).message),
  }
}
