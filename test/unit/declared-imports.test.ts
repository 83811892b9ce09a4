import { readdirSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// What the package ships imports only packages it declares: a strict installer (pnpm) gives an app's copy of the layer
// nothing else, whatever npm's flat node_modules happens to hold.
const root = fileURLToPath(new URL('../..', import.meta.url))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string, files: string[], dependencies: Record<string, string>, optionalDependencies: Record<string, string>, peerDependencies: Record<string, string> }

/** Every .ts, .vue, .mjs and .js file the package ships. */
function shippedSources(): string[] {
  const found: string[] = []
  const walk = (path: string) => {
    for (const entry of readdirSync(join(root, path), { withFileTypes: true })) {
      const child = join(path, entry.name)
      if (entry.isDirectory()) walk(child)
      else if (/\.(?:ts|vue|mjs|js)$/.test(entry.name)) found.push(child)
    }
  }
  for (const entry of pkg.files) {
    if (entry.endsWith('/')) walk(entry)
    else if (/\.(?:ts|mjs|js)$/.test(entry)) found.push(entry)
  }
  return found
}

/** The package a bare import specifier names (`crossws/adapters/node`: crossws; `@fastify/proxy-addr`: itself). */
const packageOf = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')

describe('the shipped files\' imports', () => {
  it('name only packages of dependencies, optionalDependencies or peerDependencies (or Node\'s own)', () => {
    const declared = new Set([pkg.name, ...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies), ...Object.keys(pkg.peerDependencies)])
    const files = shippedSources()
    expect(files.length).toBeGreaterThan(50)
    const undeclared: string[] = []
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8')
      for (const [, specifier] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)) {
        if (/^(?:\.|#|~|@\/|node:)/.test(specifier!) || builtinModules.includes(specifier!)) continue
        if (!declared.has(packageOf(specifier!))) undeclared.push(`${file}: ${specifier}`)
      }
    }
    expect(undeclared).toEqual([])
  })
})
