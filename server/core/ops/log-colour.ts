/**
 * Whether pretty log lines (APP_LOG_FORMAT=pretty, `nuxt dev`) carry ANSI colours, by the conventions a terminal user
 * sets: `NO_COLOR` (not empty) turns them off (no-color.org), and wins; `FORCE_COLOR` turns them on with `1`, `2`,
 * `3`, `true` or an empty value and off with any other (`0`, `false`), as Node's own console reads it; else only a
 * terminal (not `TERM=dumb`) gets them. pino-pretty left to itself asks colorette, which takes any `FORCE_COLOR`,
 * `FORCE_COLOR=0` included, as "on". Pure.
 */
export function wantsColour(env: Record<string, string | undefined>, isTerminal: boolean): boolean {
  if (env.NO_COLOR) return false
  if (env.FORCE_COLOR !== undefined) return ['', '1', '2', '3', 'true'].includes(env.FORCE_COLOR)
  return isTerminal && env.TERM !== 'dumb'
}
