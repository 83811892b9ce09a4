import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join, posix } from 'node:path'

/**
 * A Dockerfile's build stage run as a script, where no Docker engine runs: its instructions done in order as
 * `docker build` does them, in a folder standing for the image's file system (`/src` is `<root>/src`). The context is
 * taken once, at the start, without what .dockerignore names (as Docker sends it). FROM, WORKDIR, ARG, ENV, COPY from
 * the context (a `*`, `?` or `[...]` pattern that matches nothing is no error, as with BuildKit; a plain name that is
 * missing is) and RUN (`sh -c`, in the working folder, ARG and ENV values in its environment, no absolute path);
 * anything else fails.
 */
export interface Stage {
  /** The image it starts from (`node:24-bookworm-slim`). */
  from: string
  name: string | undefined
  instructions: Array<{ op: string, args: string }>
}

/** The stages of a Dockerfile: continued lines joined, comments and blank lines left out. */
export function dockerStages(text: string): Stage[] {
  const stages: Stage[] = []
  const lines = text.replace(/\\\n/g, ' ').split('\n').map(line => line.trim()).filter(line => line && !line.startsWith('#'))
  for (const line of lines) {
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? []
    if (op.toUpperCase() === 'FROM') {
      const [, from = '', name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? []
      stages.push({ from, name, instructions: [] })
      continue
    }
    const stage = stages.at(-1)
    if (!stage) throw new Error(`Dockerfile: ${op} before FROM`)
    stage.instructions.push({ op: op.toUpperCase(), args })
  }
  return stages
}

/** A .dockerignore pattern as a regular expression on a path relative to the context (`**` any folders). */
function patternRegExp(pattern: string): RegExp {
  const clean = posix.normalize(pattern.replace(/^\/+/, ''))
  let source = ''
  for (let at = 0; at < clean.length; at++) {
    const char = clean[at]!
    if (clean.startsWith('**/', at)) {
      source += '(?:.*/)?'
      at += 2
    }
    else if (clean.startsWith('**', at)) {
      source += '.*'
      at += 1
    }
    else if (char === '*') source += '[^/]*'
    else if (char === '?') source += '[^/]'
    else if (char === '[') {
      const end = clean.indexOf(']', at)
      source += clean.slice(at, end + 1)
      at = end
    }
    else source += char.replace(/[.+^${}()|\\]/g, '\\$&')
  }
  return new RegExp(`^${source}$`)
}

/** Whether .dockerignore leaves a path out: the path or a folder above it matches a pattern. */
function ignoredBy(patterns: RegExp[], path: string): boolean {
  const parts = path.split('/')
  return parts.some((_, index) => patterns.some(pattern => pattern.test(parts.slice(0, index + 1).join('/'))))
}

/** The context as Docker sends it: a copy of `folder` without what its .dockerignore names. */
function takeContext(folder: string, into: string): void {
  const ignore = existsSync(join(folder, '.dockerignore')) ? readFileSync(join(folder, '.dockerignore'), 'utf8').split('\n').map(line => line.trim()).filter(line => line && !line.startsWith('#')) : []
  if (ignore.some(line => line.startsWith('!'))) throw new Error('.dockerignore: exceptions (!) are not run here')
  const patterns = ignore.map(patternRegExp)
  cpSync(folder, into, { recursive: true, filter: source => source === folder || !ignoredBy(patterns, source.slice(folder.length + 1).split('\\').join('/')) })
}

/** The context's paths a COPY source names: a pattern's matches (maybe none), or the one path (which must exist). */
function sources(context: string, source: string): string[] {
  const clean = posix.normalize(source).replace(/^\/+/, '')
  if (!/[*?[]/.test(clean)) {
    if (!existsSync(join(context, clean))) throw new Error(`COPY ${source}: not in the context`)
    return [clean === '.' ? '' : clean]
  }
  const folder = posix.dirname(clean)
  const name = patternRegExp(posix.basename(clean))
  if (/[*?[]/.test(folder)) throw new Error(`COPY ${source}: a pattern in a folder name is not run here`)
  return existsSync(join(context, folder)) ? readdirSync(join(context, folder)).filter(entry => name.test(entry)).map(entry => posix.join(folder, entry)) : []
}

function runShell(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', chunk => output += chunk)
    child.stderr.on('data', chunk => output += chunk)
    child.on('error', reject)
    child.on('close', code => code === 0 ? resolve(output) : reject(new Error(`RUN ${command} ended with ${code}:\n${output}`)))
  })
}

/**
 * Runs `stage` with the context `folder` in `root` (a fresh folder: the image's `/`); `buildArgs` as `--build-arg`,
 * `env` under the stage's own (the PATH of the Node the stage's image carries). Returns what the RUN steps printed.
 */
export async function runStage(stage: Stage, folder: string, root: string, buildArgs: Record<string, string> = {}, env: Record<string, string> = {}): Promise<string> {
  const context = join(root, '.context')
  takeContext(folder, context)
  const variables: Record<string, string> = {}
  // The machine's environment without the test runner's NODE_ENV (an image's build stage has none).
  const { NODE_ENV: _testRunner, ...machine } = process.env
  let workdir = '/'
  let output = ''
  const inImage = (path: string) => join(root, posix.resolve(workdir, path))
  for (const { op, args } of stage.instructions) {
    if (op === 'WORKDIR') {
      workdir = posix.resolve(workdir, args)
      mkdirSync(inImage('.'), { recursive: true })
    }
    else if (op === 'ARG' || op === 'ENV') {
      const [, name, value = ''] = /^(\w+)(?:=(\S*))?$/.exec(args) ?? []
      if (!name) throw new Error(`${op} ${args}: only one NAME=value is run here`)
      variables[name] = op === 'ARG' ? buildArgs[name] ?? value : value
    }
    else if (op === 'COPY') {
      const words = args.split(/\s+/)
      if (words.some(word => word.startsWith('--'))) throw new Error(`COPY ${args}: options are not run here`)
      const destination = words.pop()!
      const paths = words.flatMap(source => sources(context, source))
      if (paths.length === 0) throw new Error(`COPY ${args}: no source files were specified`)
      for (const path of paths) {
        const into = destination.endsWith('/') || words.length > 1 || path === '' ? posix.join(destination, statSync(join(context, path)).isDirectory() ? '' : posix.basename(path)) : destination
        cpSync(join(context, path), inImage(into), { recursive: true })
      }
    }
    else if (op === 'RUN') {
      // The image's / is a folder here: a command naming an absolute path would reach the machine's.
      if (/(?:^|[\s"'=])\//.test(args)) throw new Error(`RUN ${args}: an absolute path is not run here (write it from WORKDIR)`)
      output += await runShell(args, inImage('.'), { ...machine, ...env, ...variables })
    }
    else throw new Error(`${op} ${args}: not run here`)
  }
  return output
}

/**
 * An npm cache for a build stage run here: the machine's (its content hard-linked, its index copied, so nothing of
 * the machine's is written to) without the tarballs of `integrities`. An image starts with no npm cache: the registry's
 * packages it downloads are the bytes the machine has, but a package the app installed from a file (the layer's
 * tarball) must come from that file, which the machine's cache would otherwise stand in for.
 */
export function imageNpmCache(machineCache: string, into: string, integrities: string[]): string {
  const cache = join(machineCache, '_cacache')
  const copy = join(into, '_cacache')
  mkdirSync(copy, { recursive: true })
  if (existsSync(join(cache, 'content-v2'))) execFileSync('cp', ['-al', join(cache, 'content-v2'), copy])
  if (existsSync(join(cache, 'index-v5'))) cpSync(join(cache, 'index-v5'), join(copy, 'index-v5'), { recursive: true })
  for (const integrity of integrities) {
    const [, algorithm = '', digest = ''] = /^(\w+)-(.+)$/.exec(integrity) ?? []
    const hex = Buffer.from(digest, 'base64').toString('hex')
    rmSync(join(copy, 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4)), { force: true })
  }
  return into
}
