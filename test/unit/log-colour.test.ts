import { describe, expect, it } from 'vitest'
import { wantsColour } from '../../server/core/ops/log-colour'

describe('wantsColour (pretty log lines)', () => {
  it.each([
    ['nothing set, a terminal', {}, true, true],
    ['nothing set, a pipe or a file', {}, false, false],
    ['a dumb terminal', { TERM: 'dumb' }, true, false],
    ['FORCE_COLOR=0, a terminal', { FORCE_COLOR: '0' }, true, false],
    ['FORCE_COLOR=false', { FORCE_COLOR: 'false' }, true, false],
    ['FORCE_COLOR=1, a pipe', { FORCE_COLOR: '1' }, false, true],
    ['FORCE_COLOR=3, a pipe', { FORCE_COLOR: '3' }, false, true],
    ['FORCE_COLOR=true, a pipe', { FORCE_COLOR: 'true' }, false, true],
    ['FORCE_COLOR empty, a pipe', { FORCE_COLOR: '' }, false, true],
    ['NO_COLOR=1, a terminal', { NO_COLOR: '1' }, true, false],
    ['NO_COLOR=1 and FORCE_COLOR=1: NO_COLOR wins', { NO_COLOR: '1', FORCE_COLOR: '1' }, false, false],
    ['NO_COLOR empty (not set, by no-color.org), a terminal', { NO_COLOR: '' }, true, true],
  ])('%s', (_, env, isTerminal, expected) => {
    expect(wantsColour(env, isTerminal)).toBe(expected)
  })
})
