/**
 * A short device label for a user's list of sessions ("Chrome on Windows", "Safari on iPhone"), from the User-Agent.
 * Pure. The label is made of fixed words only, never of the header's own text: a hostile User-Agent can change which
 * words, not what they say, and only its first MAX_AGENT characters are read (no pattern here can backtrack).
 */

/** How much of a User-Agent is read: real ones are a few hundred characters. */
const MAX_AGENT = 512

/** First match wins: the browsers built on Chromium say "Chrome" and "Safari" too, so they come first. */
const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/Edg(?:e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/SamsungBrowser\//, 'Samsung Internet'],
  [/YaBrowser\//, 'Yandex'],
  [/Firefox\/|FxiOS\//, 'Firefox'],
  [/Chrome\/|CriOS\/|Chromium\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/curl\//, 'curl'],
]

/** The device or system; a phone or tablet by its name where it says it (iPhone, iPad), else its system. */
const SYSTEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/iPhone|iPod/, 'iPhone'],
  [/iPad/, 'iPad'],
  [/Android/, 'Android'],
  [/Windows/, 'Windows'],
  [/CrOS/, 'ChromeOS'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/Linux/, 'Linux'],
]

/**
 * The label of a User-Agent: "<browser> on <system>", the browser or the system alone when only one is known, or ''
 * when neither is (the page then says "unknown device" in its language). At most 30 characters.
 */
export function deviceLabel(userAgent: string | undefined): string {
  const agent = typeof userAgent === 'string' ? userAgent.slice(0, MAX_AGENT) : ''
  const browser = BROWSERS.find(([pattern]) => pattern.test(agent))?.[1]
  const system = SYSTEMS.find(([pattern]) => pattern.test(agent))?.[1]
  return browser && system ? `${browser} on ${system}` : browser ?? system ?? ''
}
