import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * What an app's file of the same name does to the layer's files under app/ (README: "What an app may replace").
 * Nuxt lets an app's route middleware, component, composable or util replace a layer's of the same name. The layer
 * ships no route middleware found by its file's name (the guard is registered by its path in nuxt.config.ts), and
 * its own files import its names by path, so an app's `useAuth` or `AppError` replaces the name in the app's code
 * only. The README says, for each name the layer ships, which of the two it is.
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
const appDir = join(root, 'app')

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)])
}

/** The names Nuxt auto-imports from the layer: its composables' and utils' exports, and its components. */
function autoImportedNames(): string[] {
  const exported = ['composables', 'utils'].flatMap(folder => filesUnder(join(appDir, folder)))
    .flatMap(file => [...readFileSync(file, 'utf8').matchAll(/^export (?:async )?(?:function|class|const) (\w+)/gm)].map(match => match[1]!))
  const components = filesUnder(join(appDir, 'components')).map(file => basename(file, '.vue'))
  return [...exported, ...components]
}

/** A file's code without its comments (a name in a comment is no use of it). */
const codeOf = (file: string) => readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/<!--[\s\S]*?-->/g, '').replace(/^\s*\/\/.*$/gm, '')

describe('the layer\'s names under app/, and an app\'s files of the same names', () => {
  it('ships no route middleware found by its file\'s name: the guard is registered by its path', () => {
    expect(existsSync(join(appDir, 'middleware'))).toBe(false)
    expect(readFileSync(join(root, 'nuxt.config.ts'), 'utf8')).toContain('\'app/lib/route-guard.ts\'')
  })

  it('imports each of its auto-imported names by path in its own files, so an app\'s same-named file never replaces it there', () => {
    const names = autoImportedNames()
    expect(names).toEqual(expect.arrayContaining(['useAuth', 'usePermission', 'useApi', 'useSessionExpiry', 'useAuthMessages', 'AppError', 'Can']))
    const unimported = filesUnder(appDir).filter(file => /\.(ts|vue)$/.test(file)).flatMap((file) => {
      const code = codeOf(file)
      const imports = [...code.matchAll(/^import\s[^;]*?from\s+'[^']+'/gm)].map(match => match[0]).join('\n')
      return names
        .filter(name => new RegExp(`(?:^|[^\\w.'"])(?:${name}\\b|<${name}[\\s>/])`, 'm').test(code.replace(/^import\s[^;]*?from\s+'[^']+'/gm, '')))
        .filter(name => !new RegExp(`^export (?:async )?(?:function|class|const) ${name}\\b`, 'm').test(code))
        .filter(name => !new RegExp(`\\b${name}\\b`).test(imports))
        .map(name => `${relative(root, file)} uses ${name} without importing it`)
    })
    expect(unimported).toEqual([])
  })

  it('names each of them in the README\'s "What an app may replace", with the plugins, the pages and the guard', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    const start = readme.indexOf('### What an app may replace')
    expect(start).toBeGreaterThan(-1)
    const section = readme.slice(start, readme.indexOf('\n## ', start))
    const plugins = filesUnder(join(appDir, 'plugins')).map(file => basename(file, '.ts'))
    const pages = filesUnder(join(appDir, 'pages')).map(file => relative(root, file))
    const missing = [...autoImportedNames(), ...plugins, ...pages, 'app/error.vue', 'svc-auth-guard']
      .filter(name => !section.includes(name))
    expect(missing).toEqual([])
  })
})
