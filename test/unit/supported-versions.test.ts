import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { supportedMajors } from '../../.ci/runtime.mjs'

// The README's "Supported versions" says what CI proves: package.json's engines, .ci/run and .ci/matrix.mjs say the same.
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }, devDependencies: Record<string, string> }
const readme = read('README.md')
const section = readme.slice(readme.indexOf('## Supported versions'), readme.indexOf('\n## ', readme.indexOf('## Supported versions') + 1))

describe('supported versions', () => {
  it('are the maintained Node LTS lines alone: 22 (from 22.19) and 24', () => {
    expect(pkg.engines.node).toBe('^22.19.0 || ^24.0.0')
    expect(supportedMajors()).toEqual([22, 24])
  })

  it('the README says the engines range, and its table has one row per line, newest first, from the lowest version engines admits', () => {
    expect(section).toContain(`\`${pkg.engines.node}\``)
    const rows = [...section.matchAll(/^\| (\d+(?:\.\d+)?\+?) \| (.*) \|$/gm)].map(match => ({ node: match[1]!, cells: match[2]! }))
    const lowest = [...pkg.engines.node.matchAll(/\^(\d+)\.(\d+)\.\d+/g)].map(([, major, minor]) => minor === '0' ? major! : `${major}.${minor}+`)
    expect(rows.map(row => row.node)).toEqual(lowest.reverse())
    // The repository's own Nuxt is the table's first column.
    expect(section).toContain(`| Node | Nuxt ${pkg.devDependencies.nuxt} |`)
    // The newest line runs the whole suite (npm test) and the soak; the others, the matrix's steps.
    expect(rows[0]!.cells).toMatch(/^the whole suite \(`npm test`.*\) and the soak \|/)
    for (const row of rows.slice(1)) expect(row.cells).toMatch(/^build, unit and integration tests \|/)
  })

  it('.ci/run runs npm test and the soak on the newest line, installed from the registry, then the matrix for the rest', () => {
    const run = read('.ci/run')
    const steps = ['node .ci/runtime.mjs newest', 'eval "$runtime"', '\nnpm ci ', '\nnpm test\n', '\nnpm run soak ', 'node .ci/matrix.mjs'].map(step => run.indexOf(step))
    expect(steps.every(at => at > -1), String(steps)).toBe(true)
    expect([...steps].sort((a, b) => a - b)).toEqual(steps)
    expect(run).toMatch(/^MATRIX_SUITE_NODE="\$\(node -p 'process\.versions\.node\.split\("\."\)\[0\]'\)" node \.ci\/matrix\.mjs$/m)
  })

  it('.ci/matrix.mjs covers every supported line, and on the main suite\'s line runs the consumer test alone', () => {
    const matrix = read('.ci/matrix.mjs')
    expect(matrix).toContain('process.env.MATRIX_NODES ?? supportedMajors().join(\' \')')
    expect(matrix).toMatch(/\]\.slice\(major === suiteMajor \? 2 : 0\)/)
  })

  it('.ci/matrix.mjs has the consumer test build the app\'s image (the Dockerfile\'s stage) on the newest line, which npm test leaves out', () => {
    const matrix = read('.ci/matrix.mjs')
    expect(matrix).toContain('Number(major) === Math.max(...supportedMajors()) ? { SVC_CONSUMER_IMAGE: \'1\' } : {}')
    expect(read('test/consumer/consumer.test.ts')).toContain('const IMAGE = process.env.SVC_CONSUMER_IMAGE === \'1\'')
  })
})
