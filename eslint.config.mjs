import { createConfigForNuxt } from '@nuxt/eslint-config/flat'

export default createConfigForNuxt({
  features: { stylistic: true },
  dirs: { src: ['./app', './playground/app'] },
}).append(
  {
    ignores: ['**/.output/**', '**/.nuxt/**', 'test/e2e/screenshots/**', 'bench/.tmp/**'],
  },
  {
    // <Can> is the contract's name for the gating component.
    files: ['app/components/Can.vue'],
    rules: { 'vue/multi-word-component-names': 'off' },
  },
)
