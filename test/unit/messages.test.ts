import { describe, expect, it } from 'vitest'
import { MESSAGES, iamTimeoutMessage } from '../../server/http/errors'
import { acceptedLanguages, describeError, en, formatMessage, messagesFor, pickLocale, recogniseError, vi, type AuthMessages } from '../../shared/messages'

/** Every `{name}` of a text, sorted. */
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map(match => match[1]).sort()

describe('the message tables', () => {
  it('have the same sections and keys in every language, with the same {values}', () => {
    for (const section of Object.keys(vi) as Array<keyof AuthMessages>) {
      expect(Object.keys(en[section]).sort(), section).toEqual(Object.keys(vi[section]).sort())
      for (const [key, text] of Object.entries(vi[section])) {
        const english = (en[section] as Record<string, string>)[key]!
        expect(english.trim(), `${section}.${key}`).not.toBe('')
        expect(placeholders(english), `${section}.${key}`).toEqual(placeholders(text))
      }
    }
    expect(Object.keys(en).sort()).toEqual(Object.keys(vi).sort())
  })

  it('hold the contract\'s error texts exactly, as the server sends them', () => {
    expect(MESSAGES.missingCredentials).toBe('Thiếu tên đăng nhập hoặc mật khẩu.')
    expect(MESSAGES.otpNotConfigured).toBe('Chưa cấu hình gửi OTP (auth.endpoints.otpSend).')
    expect(MESSAGES.baseUrlMissing).toBe('auth.baseURL chưa cấu hình (APP_AUTH_BASE_URL).')
    expect(MESSAGES.tokenMissing).toBe('IAM không trả accessToken (kiểm tra auth.mapping.token).')
    expect(MESSAGES.proxyTargetMissing).toBe('apiProxyTarget chưa cấu hình.')
    expect(iamTimeoutMessage(10)).toBe('IAM không phản hồi sau 10 giây.')
  })
})

describe('recogniseError and describeError', () => {
  it('recognise every server message and show it in English', () => {
    for (const [key, text] of Object.entries(MESSAGES)) {
      if (text.includes('{')) continue
      expect(recogniseError(text)?.key, key).toBe(key)
      expect(describeError(en, text), key).toBe((en.errors as Record<string, string>)[key])
      expect(describeError(vi, text), key).toBe(text)
    }
  })

  it('read the values of a text that carries them', () => {
    expect(recogniseError('Bạn đã thử quá nhiều lần. Vui lòng thử lại sau 30 giây.')).toEqual({ key: 'tooManyAttempts', values: { seconds: '30' } })
    expect(describeError(en, iamTimeoutMessage(7))).toBe('The IAM did not answer within 7 seconds.')
    expect(describeError(en, 'Lỗi máy chủ (HTTP 502).')).toBe('Server error (HTTP 502).')
  })

  it('leave any other message as it came: the IAM\'s own, a backend\'s, a near miss', () => {
    for (const text of ['Sai tên đăng nhập hoặc mật khẩu', 'Invalid credentials', 'Thiếu tên đăng nhập hoặc mật khẩu', ' Lỗi máy chủ nội bộ.',
      'IAM không phản hồi sau giây.', 'IAM không phản hồi sau 1e3 giây.', 'Bạn đã thử quá nhiều lần. Vui lòng thử lại sau 30 giây. Thêm']) {
      expect(recogniseError(text), text).toBeUndefined()
      expect(describeError(en, text)).toBe(text)
    }
  })
})

describe('acceptedLanguages', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['en-US,en;q=0.9,vi;q=0.8', ['en-US', 'en', 'vi']],
    ['vi;q=0.5, en;q=0.9', ['en', 'vi']],
    ['fr, en;q=0, vi;q=0.3', ['fr', 'vi']],
    ['de;q=0.7, vi;q=0.7, en;q=0.7', ['de', 'vi', 'en']],
    ['en;q=abc, vi;q=0.9', ['en', 'vi']],
    [' , ;q=1, vi', ['vi']],
  ])('%j is %j', (header, expected) => {
    expect(acceptedLanguages(header)).toEqual(expected)
  })

  it('reads at most 32 entries of a hostile header', () => {
    expect(acceptedLanguages(Array.from({ length: 10_000 }, () => 'fr').join(','))).toHaveLength(32)
  })
})

describe('pickLocale', () => {
  it.each([
    ['vi', ['en-US'], 'vi'],
    ['en', ['vi'], 'en'],
    ['auto', ['en-GB', 'vi'], 'en'],
    ['auto', ['fr', 'VI-vn', 'en'], 'vi'],
    ['auto', ['fr', 'de'], 'vi'],
    ['auto', [], 'vi'],
    [undefined, ['en'], 'vi'],
    ['EN', ['en'], 'vi'],
    ['fr', ['fr'], 'vi'],
  ] as const)('setting %j with %j is %j', (setting, languages, expected) => {
    expect(pickLocale(setting, languages)).toBe(expected)
  })
})

describe('messagesFor and formatMessage', () => {
  it('lays an app\'s texts over its language only, known keys and text only', () => {
    const overrides = { en: { login: { title: 'Welcome back', bogus: 'x', lead: 42 } }, vi: { login: { title: 'Chào' } } } as never
    const english = messagesFor('en', overrides)
    expect(english.login.title).toBe('Welcome back')
    expect(english.login.lead).toBe(en.login.lead)
    expect('bogus' in english.login).toBe(false)
    expect(english.errors).toEqual(en.errors)
    expect(messagesFor('vi', overrides).login.title).toBe('Chào')
    expect(messagesFor('en')).toBe(en)
    expect(en.login.title).toBe('Sign in')
  })

  it('fills in named values and leaves unknown ones', () => {
    expect(formatMessage('after {seconds} s {other}', { seconds: 30 })).toBe('after 30 s {other}')
  })
})
