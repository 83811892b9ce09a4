/**
 * The project's own hostile-redirect corpus, generated: ways to leave an origin (schemes, '//' and '\' forms, tabs and
 * newlines, Unicode slashes and dots, userinfo, IP forms) × hosts × endings, each raw, percent-encoded once and twice.
 */

const STARTS = [
  '//', '///', '////', '\\\\', '/\\', '\\/', '/\\/', '/\t/', '/\n/', '/\r/', '\t//', ' //', '/ /', '/\u0000/', '//\t',
  'http://', 'https://', 'HTTPS://', 'hTtP://', 'http:/', 'http:', 'https:', 'http:\\\\', 'ftp://', 'ws://', '//\\',
  '/\u2215/', '/\uFF0F/', '\uFF0F\uFF0F', '/\u2044/', '/\u3000/', '/\u200B/', '/\u2028/', '/\u00A0/', '/\uFEFF/',
  '/%2f', '/%2F/', '%2f%2f', '/%5c', '%5c%5c', '/%09/', '/%0a/', '/%252f%252f', 'javascript:', 'JaVaScRiPt:',
  'jav\tascript:', 'java\nscript:', 'data:text/html,', 'vbscript:',
]

const HOSTS = [
  'evil.com', 'evil.com.', 'EVIL.COM', 'evil.com@gw.example', 'gw.example@evil.com', 'user:pass@evil.com', '@evil.com',
  '127.0.0.1', '2130706433', '0x7f000001', '0177.0.0.1', '127.1', '[::1]', '[::ffff:7f00:1]', '[0:0:0:0:0:0:0:1]',
  'evil\u3002com', 'evil\uFF0Ecom', 'evil%2ecom', '\u24D4vil.com', 'evil.com%23.gw.example', 'evil.com\\@gw.example',
  'evil.com?.gw.example', 'evil.com#gw.example', 'alert(1)',
]

const ENDS = ['', '/', '/path?x=1']

/** Every generated payload (about 7,000), raw; the test also decodes each once and twice. */
export function hostileRedirects(): string[] {
  const payloads = new Set<string>()
  for (const start of STARTS) {
    for (const host of HOSTS) {
      for (const end of ENDS) {
        const raw = `${start}${host}${end}`
        payloads.add(raw)
        const once = encodeURIComponent(raw)
        payloads.add(once)
        payloads.add(encodeURIComponent(once))
      }
    }
  }
  return [...payloads]
}
