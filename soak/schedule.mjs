// @ts-check
/**
 * The soak's faults (pure): when each happens for a run of a given length, and which failed exchanges each one
 * explains. Everything else that fails is a finding.
 */

/**
 * @typedef {'restart' | 'iam-stall' | 'iam-5xx' | 'backend-reset' | 'backend-slow' | 'redis-restart' | 'redis-empty'
 *   | 'redis-failover' | 'upload-abort' | 'slow-readers'} FaultKind
 * @typedef {'standalone' | 'sentinel'} RedisTopology
 * @typedef {{ kind: FaultKind, start: number, end: number }} FaultWindow when a fault was on, ms from the run's start
 * @typedef {import('./load.mjs').Outcome} Outcome
 */

/** The instance the soak stops (SIGTERM) and starts again. */
export const RESTARTED = 'b'

const isNetworkError = (/** @type {string | undefined} */ error) => !!error && /^(E[A-Z]+|premature-close|closed \d+|socket hang up)$/.test(error)
const isStream = (/** @type {Outcome} */ o) => o.op === 'upload' || o.op === 'download'

/**
 * Each fault: what it is (for the report and the plot), where it falls in the run (fraction of its length), and the
 * failures it explains. A fault explains nothing it does not cause: a Redis outage, a slow backend, slow readers and
 * the clients' own cuts explain no failure at all.
 * @type {Record<FaultKind, { label: string, at: number, explains: (o: Outcome) => boolean }>}
 */
export const FAULTS = {
  'restart': {
    label: `instance ${RESTARTED} SIGTERMed and started again`,
    // First, in the warm-up: both instances' processes then run through the whole span the flatness check compares.
    at: 0.05,
    // Taken out of rotation first (as a balancer's pre-stop pause does): only its open tunnels end, by the drain.
    explains: o => o.instance === RESTARTED && o.op === 'tunnel' && /^closed \d+$/.test(o.error ?? ''),
  },
  'iam-stall': {
    label: 'IAM stalls past the timeout',
    at: 0.3,
    explains: o => (o.op === 'login' && o.status === 504) || (o.op === 'session' && o.error === 'user-null'),
  },
  'iam-5xx': {
    label: 'IAM answers 500',
    at: 0.38,
    explains: o => (o.op === 'login' && o.status === 500) || (o.op === 'session' && o.error === 'user-null'),
  },
  'backend-reset': {
    label: 'backend resets streams mid-way',
    at: 0.46,
    explains: o => isStream(o) && (o.status === 502 || isNetworkError(o.error)),
  },
  'backend-slow': { label: 'backend slow (1.5 s, paced)', at: 0.54, explains: () => false },
  'redis-restart': { label: 'Redis crashes, back with its data', at: 0.62, explains: () => false },
  'redis-empty': { label: 'Redis crashes, back empty', at: 0.7, explains: () => false },
  // With --redis sentinel, in place of both crashes (the second fails back to the first primary, started again).
  'redis-failover': { label: 'Redis primary killed, a replica promoted', at: 0.62, explains: () => false },
  'upload-abort': { label: 'clients abort uploads half-way', at: 0.75, explains: () => false },
  'slow-readers': { label: 'clients read downloads at 1 MiB/s', at: 0.82, explains: () => false },
}

/** How long most faults last: 4% of the run, at least 8 s and at most 30 s. */
export function faultSeconds(/** @type {number} */ runSeconds) {
  return Math.min(30, Math.max(8, Math.round(runSeconds * 0.04)))
}

/** How long Redis stays down when it crashes: 1% of the run, 3 to 6 s. */
export function redisDownSeconds(/** @type {number} */ runSeconds) {
  return Math.min(6, Math.max(3, Math.round(runSeconds * 0.01)))
}

/**
 * The faults of a run of `runSeconds`, in order: when each begins (s from the start). With a Sentinel topology, each
 * Redis crash is a failover (the primary killed), at the crash's time.
 */
export function faultPlan(/** @type {number} */ runSeconds, /** @type {RedisTopology} */ redis = 'standalone') {
  const kinds = /** @type {FaultKind[]} */ (Object.keys(FAULTS)).filter(kind => kind !== 'redis-failover')
  return kinds.map((kind) => {
    const failover = redis === 'sentinel' && (kind === 'redis-restart' || kind === 'redis-empty')
    return { kind: failover ? /** @type {FaultKind} */ ('redis-failover') : kind, at: Math.round(FAULTS[kind].at * runSeconds) }
  })
}

/** An exchange near a window's edges may still be its doing (a timeout that fires later, a close on its way). */
const SLACK_MS = 2_000

/** The fault whose window overlaps the failed exchange and explains it, or undefined (an unexplained failure). */
export function explainFailure(/** @type {Outcome} */ outcome, /** @type {FaultWindow[]} */ windows) {
  return windows.find(w => outcome.start <= w.end + SLACK_MS && outcome.end >= w.start - SLACK_MS && FAULTS[w.kind].explains(outcome))?.kind
}

/**
 * The windows in which memory and descriptors are compared: the level "at minute 2" is the median over 15–25% of
 * the run (1.5 to 2.5 minutes of ten), after the warm-up; the end is the last 10%, after every fault has ended. A
 * warm-up that ends later (`warmUpEndMs`: a loaded machine) moves the baseline after it, a tenth of the run long: a
 * level taken while the session caches still fill would read their filling as growth.
 */
export function flatnessWindows(/** @type {number} */ runMs, warmUpEndMs = 0) {
  const from = Math.max(0.15 * runMs, warmUpEndMs)
  return { baseline: [from, from + 0.1 * runMs], end: [0.9 * runMs, runMs] }
}
