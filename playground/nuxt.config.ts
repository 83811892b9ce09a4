export default defineNuxtConfig({
  extends: ['..'],
  compatibilityDate: '2026-01-01',
})
