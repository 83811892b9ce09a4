// @ts-check
/**
 * `npm run architecture`: draws server/'s layers from the code into docs/architecture.svg (shown by
 * docs/architecture.md): dependency-cruiser reads every import, each folder becomes one box (server/core/ one box for
 * all its folders), an arrow A → B says that A imports B, drawn only where no longer path through other boxes says it
 * already (a transitive reduction: every box imports much of what stands below it), and Graphviz, compiled to
 * WebAssembly (nothing to install), lays the boxes out in their layers. `--check` writes nothing and exits 1 when
 * the drawing in docs/ is not the code's (test/unit/architecture.test.ts makes the same comparison).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Graphviz } from '@hpcc-js/wasm-graphviz'
import { cruise } from 'dependency-cruiser'

const root = fileURLToPath(new URL('..', import.meta.url))
export const DRAWING = fileURLToPath(new URL('../docs/architecture.svg', import.meta.url))

/** The boxes, a row a layer from the top, each with what it holds (docs/architecture.md says more). */
const LAYERS = [
  [['server/node-server.ts', 'the Node server: made, dispatch, upgrade, drain'], ['server/routes/', 'one thin handler a route'], ['server/plugins/', 'the start'], ['server/utils/', 'the API apps get'], ['server/dev/', 'the gate under nuxt dev']],
  [['server/gate/', 'the request gate, probes, the stores\' start']],
  [['server/proxy/', '/api/** stream, WebSocket tunnel, backend pool'], ['server/verify/', 'forward auth: GET /auth/verify']],
  [['server/iam/', 'the contract IAM'], ['server/oidc/', 'OpenID Connect']],
  [['server/session/', 'sealed cookie, revocations, a session\'s token']],
  [['server/stores/', 'Redis, the login limits']],
  [['server/http/', 'a request\'s scope, errors, bodies, access and audit lines']],
  [['server/ops/', 'configuration, logger, metrics, drain']],
  [['server/core/', 'pure code, a folder per concern']],
]

/** The box a file belongs to, or undefined for a file drawn in none (the preset, a type declaration). */
function boxOf(/** @type {string} */ path) {
  if (path.startsWith('server/core/')) return 'server/core/'
  return LAYERS.flat().map(([box]) => box).find(box => box.endsWith('/') ? path.startsWith(box) : path === box)
}

/** Each box's direct imports of other boxes, from the code. */
async function boxImports() {
  const rules = createRequire(import.meta.url)('../.dependency-cruiser.cjs')
  const { output } = await cruise(['server'], { ...rules.options, baseDir: root })
  /** @type {Map<string, Set<string>>} */
  const edges = new Map()
  for (const module of /** @type {import('dependency-cruiser').ICruiseResult} */ (output).modules) {
    const from = boxOf(module.source)
    if (!from) continue
    for (const dependency of module.dependencies) {
      const to = boxOf(dependency.resolved)
      if (to && to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to))
    }
  }
  return edges
}

/** The arrows no longer path already stands for. */
function reduce(/** @type {Map<string, Set<string>>} */ edges) {
  const reaches = (/** @type {string} */ from, /** @type {string} */ to, /** @type {Set<string>} */ seen = new Set()) => {
    for (const next of edges.get(from) ?? []) {
      if (next === to) return true
      if (!seen.has(next) && (seen.add(next), reaches(next, to, seen))) return true
    }
    return false
  }
  return [...edges].flatMap(([from, tos]) => [...tos].filter(to => ![...tos].some(via => via !== to && reaches(via, to))).map(to => [from, to])).sort()
}

/** The drawing of server/ as the code stands: an SVG text. */
export async function drawArchitecture() {
  const arrows = reduce(await boxImports())
  const name = (/** @type {string} */ box) => box.slice('server/'.length)
  const dot = [
    'digraph layers {',
    '  graph [rankdir=TB, nodesep=0.3, ranksep=0.35, fontname="Helvetica"]',
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffcc", fontname="Helvetica", fontsize=10, margin="0.25,0.06"]',
    '  edge [color="#00000066", arrowsize=0.6]',
    ...LAYERS.map(row => `  { rank=same; ${row.map(([box, says]) => `"${box}" [label=<<b>${name(box)}</b><br/><font point-size="8">${says}</font>>]`).join('; ')} }`),
    ...arrows.map(([from, to]) => `  "${from}" -> "${to}"`),
    '}',
  ].join('\n')
  return (await Graphviz.load()).dot(dot)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const drawing = await drawArchitecture()
  if (process.argv.includes('--check')) {
    const same = readFileSync(DRAWING, 'utf8') === drawing
    console.log(same ? 'docs/architecture.svg is the code\'s' : 'docs/architecture.svg is out of date: run npm run architecture')
    process.exit(same ? 0 : 1)
  }
  writeFileSync(DRAWING, drawing)
  console.log(`wrote ${DRAWING.slice(root.length)}`)
}
