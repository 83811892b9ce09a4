/**
 * The /api path corpus: paths the proxy sends on (with the base path they are joined to and the backend path that
 * results), and hostile spellings it refuses (a climb above the base path, a path the router did not see). Shared by
 * the backendPath unit test, the routes' choice of a backend (api-routes.test.ts) and the integration test that runs
 * it against two routes of a routes file.
 */

/** [raw URL, target base path, backend path]. */
export const SENT_PATHS: readonly [string, string, string][] = [
  ['/api/orders', '/', '/orders'],
  ['/api/orders?x=1&y=%2F', '/', '/orders?x=1&y=%2F'],
  ['/api/orders', '/v1', '/v1/orders'],
  ['/api/orders', '/v1/', '/v1/orders'],
  ['/api/a%20b/c', '/base', '/base/a%20b/c'],
  ['/api', '/v1', '/v1'],
  ['/api', '/', '/'],
  ['/api?x=1', '/v1', '/v1?x=1'],
  ['/api/', '/v1', '/v1/'],
  ['/api/..hidden/x', '/', '/..hidden/x'],
  ['/api/orders?next=../../admin', '/', '/orders?next=../../admin'],
  ['/api/orders;v=2/items', '/', '/orders;v=2/items'],
  ['/api/..x;/y', '/', '/..x;/y'],
  // White space inside a name is a name; dots inside or in front of one too.
  ['/api/a%20b/c.d', '/', '/a%20b/c.d'],
  ['/api/.well-known/x', '/', '/.well-known/x'],
  ['/api/%E1%BB%87/đơn', '/', '/%E1%BB%87/đơn'],
]

/** Raw URLs under /api the proxy refuses (400, no backend request), whatever the base path. */
export const REFUSED_PATHS: readonly string[] = [
  '/api/../admin', '/api/orders/../../admin', '/api/./x', '/api/%2e%2e/admin', '/api/%2E%2E/admin', '/api/.%2e/admin',
  '/api/%252e%252e/admin', '/api/..%2fadmin', '/api/..%5cadmin', '/api/..\\admin', '/api/x/..', '/api/%2e',
  '/api/%2e%2e%2', '/apiary', '/other', 'http://evil/api/x', '/api/%25252e%25252e/x',
  '/api/..;/admin', '/api/%2e%2e;a=b/x', '/api/..%3b/x', '/api/.;/x', '/api/x/..;jsessionid=1/admin', '/api/..;', '/api/%2e;x',
  // The second review: a trailing dot, white space at a name's end, control characters, fullwidth dots and slashes.
  '/api/admin/revoke-user.', '/api/admin/revoke-user%2e', '/api/admin/revoke-user.;x', '/api/admin./revoke-user',
  '/api/admin/revoke-user%20', '/api/%20admin/x', '/api/admin/revoke-user%09', '/api/admin%00/x', '/api/admin/revoke-user%00.json',
  '/api/a%0ab', '/api/a%7fb', '/api/admin/revoke-user%C2%A0', '/api/admin/revoke-user%E3%80%80', '/api/admin/revoke-user%2520',
  '/api/．．/admin', '/api/a/％２ｅ％２ｅ/b', '/api/a/%EF%BC%85%32%65%EF%BC%85%32%65/b', '/api/%EF%BC%8E%EF%BC%8E/admin', '/api/x/%EF%BC%8E', '/api/admin／..', '/api/..%EF%BC%8Fadmin',
]
