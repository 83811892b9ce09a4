import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

// The README is read on npm and in node_modules/svc-auth-gateway, where only the package's files are: every link is
// to a file the package ships, to a heading of its own, or absolute (the repository's files by their address there).
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
const pkg = JSON.parse(read('package.json')) as { files: string[], repository: { type: string, url: string }, homepage: string, bugs: { url: string } }
/** https://github.com/<owner>/<name>, from package.json's repository. */
const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '')

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as '-'. */
const anchor = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')

/** Whether the package ships a path (package.json's `files`; package.json itself always). */
const shipped = (path: string) => path === 'package.json' || pkg.files.some(entry => entry.endsWith('/') ? path.startsWith(entry) : path === entry)

/** The targets of the Markdown links of a text, code blocks and code spans left out. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '')
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g), ...prose.matchAll(/^\[[^\]]+\]:\s*(\S+)/gm)].map(match => match[1]!)
}

describe('package.json', () => {
  it('names the repository, its home page and where issues go, one repository for all three', () => {
    expect(pkg.repository.type).toBe('git')
    expect(repository).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/)
    expect(pkg.homepage).toBe(`${repository}#readme`)
    expect(pkg.bugs.url).toBe(`${repository}/issues`)
  })
})

describe('the README\'s links', () => {
  const readme = read('README.md')
  const targets = linkTargets(readme)

  it('are found (the test reads links at all)', () => {
    expect(targets.length).toBeGreaterThan(20)
  })

  it('go to a file the package ships, a heading of the README, or an absolute address', () => {
    const headings = new Set([...readme.matchAll(/^#{1,6} (.+)$/gm)].map(match => anchor(match[1]!)))
    for (const target of targets) {
      if (/^[a-z]+:/i.test(target)) continue
      if (target.startsWith('#')) {
        expect(headings, target).toContain(target.slice(1))
        continue
      }
      expect(shipped(target.replace(/^\.\//, '').replace(/#.*$/, '')), `${target}: not in the package; link it by its address in ${repository}`).toBe(true)
    }
  })

  it('into the repository, name files that exist there, and headings they have', () => {
    const inRepository = targets.filter(target => target.startsWith(`${repository}/blob/main/`))
    expect(inRepository.length).toBeGreaterThan(0)
    for (const target of inRepository) {
      const [path = '', heading] = target.slice(`${repository}/blob/main/`.length).split('#')
      expect(existsSync(new URL(`../../${path}`, import.meta.url)), target).toBe(true)
      if (heading) expect([...read(path).matchAll(/^#{1,6} (.+)$/gm)].map(match => anchor(match[1]!)), target).toContain(heading)
    }
  })
})
