export default defineNuxtConfig({
  extends: ['..'],
  app: { head: { htmlAttrs: { lang: 'vi' }, title: 'Đơn hàng nội bộ' } },
  css: ['~/assets/main.css'],
  compatibilityDate: '2026-01-01',
})
