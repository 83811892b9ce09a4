/** The page that asks before logging out when another site sent the browser to /auth/logout. Pure. */
import { vi, type AuthMessages, type Locale } from '../../../shared/messages'

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, char => `&#${char.charCodeAt(0)};`)
}

/**
 * A small same-origin page: its button goes to `logoutUrl` again, which is then a same-origin navigation and logs out.
 * `logoutUrl` must already be an internal URL (built from a safe redirect). Texts in `locale` (Vietnamese by default),
 * from `messages` (the table with the app's overrides), escaped like the address.
 */
export function logoutConfirmationHtml(logoutUrl: string, locale: Locale = 'vi', messages: AuthMessages = vi): string {
  const href = escapeHtml(logoutUrl)
  const text = messages.logout
  return `<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(text.title)}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f6f8;color:#1f2933;display:grid;place-items:center;min-height:100vh;margin:0}
main{background:#fff;padding:2rem 2.5rem;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08);text-align:center}
h1{font-size:1.25rem;margin:0 0 1.5rem}
a{display:inline-block;margin:0 .5rem;padding:.6rem 1.4rem;border-radius:8px;text-decoration:none}
.primary{background:#1d4ed8;color:#fff}.secondary{color:#1d4ed8}
</style>
</head>
<body>
<main>
<h1>${escapeHtml(text.question)}</h1>
<a class="primary" href="${href}">${escapeHtml(text.confirm)}</a>
<a class="secondary" href="/">${escapeHtml(text.stay)}</a>
</main>
</body>
</html>
`
}
