import { acceptedLanguages, pickLocale } from '../../shared/messages'
import { useAuthLocale } from '../lib/auth-state'

/**
 * Chooses the language of the layer's pages once per page load, from appConfig.svcAuth.locale: 'vi' (default),
 * 'en', or 'auto' (the browser's languages: Accept-Language in the server render, navigator.languages in an app
 * without one). The server's choice travels in the payload, so the browser shows what the server rendered.
 * `<html lang>` follows it.
 */
export default defineNuxtPlugin({
  name: 'svc-auth-locale',
  setup() {
    const setting = useAppConfig().svcAuth?.locale
    const locale = useAuthLocale()
    if (import.meta.server) {
      locale.value = pickLocale(setting, acceptedLanguages(useRequestHeaders(['accept-language'])['accept-language']))
      // The same address answers in another language to another browser: caches must keep them apart.
      if (setting === 'auto') useRequestEvent()?.node.res.appendHeader('vary', 'Accept-Language')
    }
    else if (!useNuxtApp().payload.serverRendered) {
      locale.value = pickLocale(setting, navigator.languages)
    }
    useHead({ htmlAttrs: { lang: locale } })
  },
})
