import { describe, expect, it } from 'vitest'
import { logoutConfirmationHtml } from '../../server/core/logout-page'

describe('logoutConfirmationHtml', () => {
  it('asks in Vietnamese and links to the logout URL it is given', () => {
    const html = logoutConfirmationHtml('/auth/logout?redirect=%2Forders')
    expect(html).toContain('<html lang="vi">')
    expect(html).toContain('Bạn có muốn đăng xuất?')
    expect(html).toContain('href="/auth/logout?redirect=%2Forders"')
    expect(html).not.toMatch(/<script|<form|<iframe/i)
  })

  it('escapes what it is given', () => {
    const html = logoutConfirmationHtml('/auth/logout?redirect="><script>alert(1)</script>&\'')
    expect(html).not.toContain('<script>')
    expect(html).toContain('href="/auth/logout?redirect=&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;&#38;&#39;"')
  })
})
