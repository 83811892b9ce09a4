import { afterAll, expect } from 'vitest'
import { crashLines, logEntries, started } from './gateway'

// Setup file of the integration project: after each file, no gateway it started printed an uncaught exception or a
// stack trace, whatever the tests sent it, and every line it wrote on stdout is a JSON log line (unless it was started
// with APP_LOG_FORMAT=pretty).
afterAll(() => {
  for (const gateway of started.splice(0)) {
    expect(crashLines(gateway.output()), `output of ${gateway.url}`).toEqual([])
    if (gateway.logFormat !== 'pretty') expect(() => logEntries(gateway.stdout()), `stdout of ${gateway.url}`).not.toThrow()
  }
})
