/** Device fields the IAM requires, derived from the request. Pure. */

const BROWSERS: Array<[RegExp, string]> = [
  [/Edg(?:e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/SamsungBrowser\//, 'Samsung Internet'],
  [/Firefox\/|FxiOS\//, 'Firefox'],
  [/Chrome\/|CriOS\/|Chromium\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/curl\//, 'curl'],
]

const SYSTEMS: Array<[RegExp, string]> = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
]

/** A short readable device name from the User-Agent, for example 'Chrome on Linux'. */
export function deviceNameFromUserAgent(userAgent: string | undefined): string {
  const agent = userAgent ?? ''
  const browser = BROWSERS.find(([pattern]) => pattern.test(agent))?.[1] ?? 'Trình duyệt'
  const system = SYSTEMS.find(([pattern]) => pattern.test(agent))?.[1]
  return system ? `${browser} on ${system}` : browser
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Whether a device cookie holds a well-formed UUID (anything else is replaced). */
export function isDeviceId(value: string | undefined): value is string {
  return !!value && UUID.test(value)
}
