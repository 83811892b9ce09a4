import { mockNuxtImport } from '@nuxt/test-utils/runtime'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { useAuth } from '../../app/composables/useAuth'
import { useLoginMethod } from '../../app/lib/auth-state'

// Where useAuth().login() sends the browser: navigateTo is Nuxt's, watched here.
const { navigateToMock } = vi.hoisted(() => ({ navigateToMock: vi.fn() }))
mockNuxtImport('navigateTo', () => navigateToMock)

describe('useAuth().login() with an OpenID Provider (APP_AUTH_KIND=oidc)', () => {
  beforeEach(() => {
    navigateToMock.mockReset()
  })

  it('starts the provider login (GET /auth/sso) instead of posting credentials, back to the page given', async () => {
    useLoginMethod().value = { sso: true, autoRedirect: false }
    void useAuth().login({ username: 'admin', password: 'admin123' }, '/orders?page=2')
    await vi.waitFor(() => expect(navigateToMock).toHaveBeenCalledWith('/auth/sso?redirect=%2Forders%3Fpage%3D2', { external: true }))
  })

  it('keeps the redirect rule: another origin is the home page', async () => {
    useLoginMethod().value = { sso: true, autoRedirect: false }
    void useAuth().login(undefined, 'https://evil.example/')
    await vi.waitFor(() => expect(navigateToMock).toHaveBeenCalledWith('/auth/sso?redirect=%2F', { external: true }))
  })

  it('with the contract IAM and no credentials, goes to the login page', async () => {
    useLoginMethod().value = { sso: false, autoRedirect: false }
    void useAuth().login(undefined, '/about')
    await vi.waitFor(() => expect(navigateToMock).toHaveBeenCalledWith('/auth/login?redirect=%2Fabout'))
  })
})
