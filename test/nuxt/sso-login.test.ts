import { mockNuxtImport, mountSuspended } from '@nuxt/test-utils/runtime'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import LoginPage from '../../app/pages/auth/login.vue'
import { useAuth } from '../../app/composables/useAuth'
import { useLoginMethod } from '../../app/lib/auth-state'
import { en, vi as vietnamese } from '../../shared/messages'

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

describe('the login page with APP_OIDC_AUTO_REDIRECT', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  it('goes to the provider from the browser when the server saw http but the browser is on https (a TLS proxy that sends no X-Forwarded-Proto)', async () => {
    const assign = vi.fn()
    vi.stubGlobal('location', { protocol: 'https:', host: 'app.example', assign })
    useLoginMethod().value = { sso: true, autoRedirect: true, plainHttp: true }
    await mountSuspended(LoginPage)
    await vi.waitFor(() => expect(assign).toHaveBeenCalledWith('/auth/sso?redirect=%2F'))
  })

  it('stays and says why when the browser is on plain http too', async () => {
    const assign = vi.fn()
    vi.stubGlobal('location', { protocol: 'http:', host: 'staging.example', assign })
    useLoginMethod().value = { sso: true, autoRedirect: true, plainHttp: true }
    const page = await mountSuspended(LoginPage)
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(assign).not.toHaveBeenCalled()
    // In the page's language (the playground's locale is 'auto': the browser's).
    expect([vietnamese.errors.plainHttp, en.errors.plainHttp]).toContain(page.get('[role=alert]').text())
  })
})
