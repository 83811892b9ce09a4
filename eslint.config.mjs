import { createConfigForNuxt } from '@nuxt/eslint-config/flat'

export default createConfigForNuxt({
  features: { stylistic: true },
  dirs: { src: ['./app', './playground/app'] },
}).append({
  ignores: ['**/.output/**', '**/.nuxt/**', 'test/e2e/screenshots/**', 'bench/.tmp/**'],
})
