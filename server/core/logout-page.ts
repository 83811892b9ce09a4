/** The page that asks before logging out when another site sent the browser to /auth/logout. Pure. */

export const LOGOUT_QUESTION = 'Bạn có muốn đăng xuất?'

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, char => `&#${char.charCodeAt(0)};`)
}

/**
 * A small same-origin page: its button goes to `logoutUrl` again, which is then a same-origin navigation and logs out.
 * `logoutUrl` must already be an internal URL (built from a safe redirect).
 */
export function logoutConfirmationHtml(logoutUrl: string): string {
  const href = escapeHtml(logoutUrl)
  return `<!doctype html>
<html lang="vi">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Đăng xuất</title>
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
<h1>${LOGOUT_QUESTION}</h1>
<a class="primary" href="${href}">Đăng xuất</a>
<a class="secondary" href="/">Ở lại</a>
</main>
</body>
</html>
`
}
