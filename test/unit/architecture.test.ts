import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cruise, type ICruiseResult } from 'dependency-cruiser'
import { describe, expect, it } from 'vitest'
import { drawArchitecture, DRAWING } from '../../dev/architecture.mjs'

// The house (docs/architecture.md): server/ by concern, checked with the rules of .dependency-cruiser.cjs, which
// `npm run lint:deps` also runs in npm test's lint phase.
const root = fileURLToPath(new URL('../..', import.meta.url))
const rules = createRequire(import.meta.url)('../../.dependency-cruiser.cjs')

/** The server/ of `baseDir` cruised with the house's rules. */
async function cruiseServer(baseDir = root): Promise<ICruiseResult> {
  const { output } = await cruise(['server'], { ...rules.options, baseDir, validate: true, ruleSet: { forbidden: rules.forbidden } })
  return output as ICruiseResult
}

/** Every file under a folder, whole paths. */
function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

/** A copy of server/ and shared/ with one file changed, cruised: the rules must see the change. */
async function withPlanted(file: string, line: string) {
  const copy = mkdtempSync(join(tmpdir(), 'svc-house-'))
  try {
    for (const folder of ['server', 'shared']) cpSync(join(root, folder), join(copy, folder), { recursive: true })
    writeFileSync(join(copy, file), `${line}\n${readFileSync(join(copy, file), 'utf8')}`)
    return (await cruiseServer(copy)).summary.violations.map(({ rule, from, to }) => ({ rule: rule.name, from, to }))
  }
  finally {
    rmSync(copy, { recursive: true, force: true })
  }
}

describe('the house: server/ by concern', () => {
  it('keeps every rule: no circle, a pure core, each layer importing only those below it', async () => {
    const result = await cruiseServer()
    expect(result.summary.violations).toEqual([])
    expect(result.modules.filter(module => module.source.startsWith('server/')).length).toBeGreaterThan(80)
  })

  it('fails on a planted back-arrow, a circle and an impure core, naming both files', async () => {
    expect(await withPlanted('server/ops/logger.ts', 'import \'../proxy/api-proxy\'')).toContainEqual({
      rule: 'ops-imports-no-layer-above',
      from: 'server/ops/logger.ts',
      to: 'server/proxy/api-proxy.ts',
    })
    expect(await withPlanted('server/session/token.ts', 'import \'../oidc/tokens\'')).toContainEqual({
      rule: 'session-imports-no-layer-above',
      from: 'server/session/token.ts',
      to: 'server/oidc/tokens.ts',
    })
    expect((await withPlanted('server/http/scope.ts', 'import \'./audit\'')).map(violation => violation.rule)).toContain('no-circular')
    expect(await withPlanted('server/core/session/seal.ts', 'import \'../../ops/logger\'')).toContainEqual({
      rule: 'core-is-pure',
      from: 'server/core/session/seal.ts',
      to: 'server/ops/logger.ts',
    })
    expect(await withPlanted('server/proxy/api-proxy.ts', 'import \'../verify/forward-auth\'')).toContainEqual({
      rule: 'proxy-not-verify',
      from: 'server/proxy/api-proxy.ts',
      to: 'server/verify/forward-auth.ts',
    })
  })

  it('has no import chain longer than 8 files inside server/ (type-only imports counted)', async () => {
    const { modules } = await cruiseServer()
    const imports = new Map(modules.map(module => [module.source, module.dependencies.map(dependency => dependency.resolved).filter(path => path.startsWith('server/'))]))
    const longest = new Map<string, string[]>()
    const chainFrom = (file: string): string[] => {
      const known = longest.get(file)
      if (known) return known
      const below = (imports.get(file) ?? []).map(chainFrom).sort((a, b) => b.length - a.length)[0] ?? []
      const chain = [file, ...below]
      longest.set(file, chain)
      return chain
    }
    const chains = [...imports.keys()].filter(file => file.startsWith('server/')).map(chainFrom).sort((a, b) => b.length - a.length)
    expect(chains[0]!.length, chains[0]!.join(' -> ')).toBeLessThanOrEqual(8)
  })

  it('holds at most 12 files a folder and 300 lines a file, and no server/lib/', () => {
    const files = filesUnder(join(root, 'server')).filter(path => /\.(ts|mts|js|mjs)$/.test(path))
    const perFolder = new Map<string, number>()
    for (const file of files) perFolder.set(join(file, '..'), (perFolder.get(join(file, '..')) ?? 0) + 1)
    expect([...perFolder].filter(([, count]) => count > 12)).toEqual([])
    expect(files.map(file => [file.slice(root.length), readFileSync(file, 'utf8').split('\n').length - 1] as const).filter(([, lines]) => lines > 300)).toEqual([])
    expect(existsSync(join(root, 'server/lib'))).toBe(false)
  })

  it('draws it as it is: docs/architecture.svg is what npm run architecture makes of the code', async () => {
    expect(readFileSync(DRAWING, 'utf8') === await drawArchitecture(), 'docs/architecture.svg is out of date: run npm run architecture').toBe(true)
  })
})
