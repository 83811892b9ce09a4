import { describe, expect, it } from 'vitest'
import { logoutConfirmationHtml } from '../../server/core/http/logout-page'
import { messagesFor } from '../../shared/messages'

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

describe('logoutConfirmationHtml in English, with an app\'s own texts', () => {
  it('asks in English with <html lang="en">', () => {
    const html = logoutConfirmationHtml('/auth/logout?redirect=%2F', 'en', messagesFor('en'))
    expect(html).toContain('<html lang="en">')
    expect(html).toContain('<title>Sign out</title>')
    expect(html).toContain('<h1>Do you want to sign out?</h1>')
    expect(html).toContain('>Sign out</a>')
    expect(html).toContain('>Stay</a>')
    expect(html).not.toContain('đăng xuất')
  })

  it('escapes an override as it escapes the address', () => {
    const html = logoutConfirmationHtml('/auth/logout', 'en', messagesFor('en', { en: { logout: { question: 'Leave <b>now</b>?' } } }))
    expect(html).toContain('<h1>Leave &#60;b&#62;now&#60;/b&#62;?</h1>')
  })

  it('keeps a <script> in any overridden text as text: title, question, both buttons', () => {
    const hostile = '</title><script>alert("x")</script>'
    const overrides = { vi: { logout: { title: `T${hostile}`, question: `Q${hostile}`, confirm: `C${hostile}`, stay: `S${hostile}` } } }
    const html = logoutConfirmationHtml('/auth/logout', 'vi', messagesFor('vi', overrides))
    const escaped = '&#60;/title&#62;&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;'
    expect(html).toContain(`<title>T${escaped}</title>`)
    expect(html).toContain(`<h1>Q${escaped}</h1>`)
    expect(html).toContain(`>C${escaped}</a>`)
    expect(html).toContain(`>S${escaped}</a>`)
    expect(html).not.toMatch(/<script|<\/title><script/i)
  })
})
