import { afterAll, expect } from 'vitest'
import { crashLines, started } from './gateway'

// Setup file of the integration project: after each file, no gateway it started printed an uncaught exception or a
// stack trace, whatever the tests sent it.
afterAll(() => {
  for (const gateway of started.splice(0)) expect(crashLines(gateway.stderr()), `stderr of ${gateway.url}`).toEqual([])
})
