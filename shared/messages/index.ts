/**
 * The layer's languages: one message table per language (vi.ts, en.ts), the choice of a language from the app's
 * setting and the browser's languages, an app's overrides, and the contract's errors recognised by their Vietnamese
 * text so a page can show them in its own language. Pure: used by the pages and by the server's logout page.
 */
import { en } from './en'
import { vi, type AuthMessages, type ErrorKey } from './vi'

export type { AuthMessages, ErrorKey }
export { en, vi }

export const LOCALES = ['vi', 'en'] as const
export type Locale = typeof LOCALES[number]
/** appConfig.svcAuth.locale: a language, or 'auto' for the browser's. @default 'vi' */
export type LocaleSetting = Locale | 'auto'
export const DEFAULT_LOCALE: Locale = 'vi'

const TABLES: Record<Locale, AuthMessages> = { vi, en }

/** An app's overrides: any text of any section, per language. */
export type MessageOverrides = { [L in Locale]?: { [S in keyof AuthMessages]?: { [K in keyof AuthMessages[S]]?: string } } }

/**
 * The browser's languages in its order of preference, from an Accept-Language header ('en-US,en;q=0.9,vi;q=0.8'):
 * q=0 is a refusal, a malformed q counts as 1, equal weights keep their order.
 */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return []
  const ranked: Array<{ tag: string, q: number, at: number }> = []
  for (const [at, part] of header.split(',').slice(0, 32).entries()) {
    const [tag = '', ...params] = part.split(';').map(piece => piece.trim())
    const weight = params.find(param => /^q=/i.test(param))?.slice(2)
    const q = weight !== undefined && /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(weight) ? Number(weight) : 1
    if (tag && q > 0) ranked.push({ tag, q, at })
  }
  return ranked.sort((a, b) => b.q - a.q || a.at - b.at).map(entry => entry.tag)
}

/**
 * The language of the pages: the app's setting, or for 'auto' the first of the browser's languages the layer speaks
 * ('en-GB' is 'en'), else Vietnamese. An unknown setting is Vietnamese.
 */
export function pickLocale(setting: unknown, languages: readonly string[] = []): Locale {
  if (setting === 'vi' || setting === 'en') return setting
  if (setting !== 'auto') return DEFAULT_LOCALE
  for (const language of languages) {
    const primary = language.toLowerCase().split('-')[0]
    if ((LOCALES as readonly string[]).includes(primary!)) return primary as Locale
  }
  return DEFAULT_LOCALE
}

/** The table of a language with the app's overrides laid over it: only known keys, only text. */
export function messagesFor(locale: Locale, overrides?: MessageOverrides): AuthMessages {
  const base = TABLES[locale]
  const own = overrides?.[locale]
  if (!own || typeof own !== 'object') return base
  const merged: Record<string, Record<string, string>> = {}
  for (const section of Object.keys(base) as Array<keyof AuthMessages>) {
    const texts: Record<string, string> = { ...base[section] }
    const given = own[section] as Record<string, unknown> | undefined
    for (const key of Object.keys(texts)) {
      if (typeof given?.[key] === 'string') texts[key] = given[key]
    }
    merged[section] = texts
  }
  return merged as unknown as AuthMessages
}

/** A text with its `{name}` values filled in. */
export function formatMessage(template: string, values: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => name in values ? String(values[name]) : whole)
}

let patterns: Array<{ key: ErrorKey, pattern: RegExp, names: string[] }> | undefined

/**
 * Which known error a message is, with its values: the Vietnamese texts of vi.ts are the contract's, sent as they are
 * by the routes, so they identify the error ('Bạn đã thử quá nhiều lần. Vui lòng thử lại sau 30 giây.' is
 * tooManyAttempts with seconds 30). Anything else (the IAM's or a backend's own message) is undefined.
 */
export function recogniseError(message: string): { key: ErrorKey, values: Record<string, string> } | undefined {
  patterns ??= (Object.entries(vi.errors) as Array<[ErrorKey, string]>).map(([key, text]) => {
    const names: string[] = []
    const source = text.split(/\{(\w+)\}/).map((piece, index) => {
      if (index % 2) {
        names.push(piece)
        return '(\\d{1,10})'
      }
      return piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    }).join('')
    return { key, pattern: new RegExp(`^${source}$`), names }
  })
  for (const { key, pattern, names } of patterns) {
    const match = pattern.exec(message)
    if (match) return { key, values: Object.fromEntries(names.map((name, index) => [name, match[index + 1]!])) }
  }
  return undefined
}

/** An error's message in a page's language: a known one from the table, any other as it came. */
export function describeError(messages: AuthMessages, message: string): string {
  const known = recogniseError(message)
  return known ? formatMessage(messages.errors[known.key], known.values) : message
}
