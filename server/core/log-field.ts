/** Capping what a client (or an IAM) sent before it goes into a log line. Pure. */

/** The most characters of a client-supplied value a log line holds (a username, an application code, an id). */
export const MAX_LOG_FIELD = 128

/**
 * `value` cut to `max` characters, marked with how much was cut (`…[+63372]`), so a line can never carry a client's
 * megabytes; shorter values are returned as they are.
 */
export function capLogField(value: string, max = MAX_LOG_FIELD): string {
  return value.length > max ? `${value.slice(0, max)}…[+${value.length - max}]` : value
}

/** A path or URL followed by its query: the query is what withoutQueries replaces. */
const PATH_WITH_QUERY = /((?:[a-z][\w+.-]*:\/\/[^\s/?#"'`<>]*)?\/[^\s?#"'`<>]*)\?[^\s#"'`<>]*/gi

/**
 * Text with the query of every path or URL in it replaced by '?…': a query may hold anything (a token, a code), and
 * no log line holds one. Used on what the server's own libraries write through console (Vue Router's "no match"
 * warning names the whole path of a server render, query included).
 */
export function withoutQueries(text: string): string {
  return text.includes('?') ? text.replace(PATH_WITH_QUERY, '$1?…') : text
}
