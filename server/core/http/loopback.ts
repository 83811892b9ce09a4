/**
 * Whether a URL names a loopback host, as plain-http development addresses must (an OpenID issuer over http://).
 * Pure.
 */

/** One decimal octet as written canonically: 0-255, no leading zero, no sign. */
const OCTET = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/

/**
 * Whether `text` is an absolute URL whose host is loopback: `localhost`, any address of 127.0.0.0/8, or `[::1]`,
 * spelled the one canonical way. The URL parser reads `0x7f.1`, `2130706433` or `[0:0::1]` as loopback addresses too;
 * those spellings are refused here (the host must be written as the parser gives it back), as are names that only
 * begin like one (`127.0.0.1.evil.com`, `localhost.evil`).
 */
export function isLoopbackUrl(text: string): boolean {
  let url: URL
  try {
    url = new URL(text)
  }
  catch {
    return false
  }
  const host = url.hostname
  // The parser lower-cases and rewrites numeric hosts: a host not written as it gives it back is not canonical.
  const authority = /^[a-z][\w+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(text)?.[1]
  if (authority?.toLowerCase() !== host) return false
  if (host === 'localhost' || host === '[::1]') return true
  const octets = host.split('.')
  return octets.length === 4 && octets[0] === '127' && octets.every(octet => OCTET.test(octet))
}
