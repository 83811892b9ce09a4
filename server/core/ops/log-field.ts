/** Capping what a client (or an IAM) sent before it goes into a log line. Pure. */

/** The most characters of a client-supplied value a log line holds (a username, an application code, an id). */
export const MAX_LOG_FIELD = 128

/** The most characters of a request path an access line or a span holds (the query is never written: it may hold anything). */
export const MAX_LOGGED_PATH = 2048

/**
 * `value` cut to `max` characters, marked with how much was cut (`…[+63372]`), so a line can never carry a client's
 * megabytes; shorter values are returned as they are.
 */
export function capLogField(value: string, max = MAX_LOG_FIELD): string {
  return value.length > max ? `${value.slice(0, max)}…[+${value.length - max}]` : value
}

/** A query: a '?' and what follows it up to white space or a fragment (linear: no backtracking over the text). */
const QUERY = /\?[^\s#]+/g

/**
 * Text with every query in it replaced by '?…': a query may hold anything (a token, a code), and no log line holds
 * one. Used on what the server's own libraries write through console (Vue Router's "no match" warning names the whole
 * path of a server render, query included). A '?' followed by white space or at the end (a question) stays.
 */
export function withoutQueries(text: string): string {
  return text.includes('?') ? text.replace(QUERY, '?…') : text
}
