import { afterAll, beforeAll } from 'vitest'
import { startSampleBackend } from '../../dev/backend.mjs'
import { startDevIam } from '../../dev/iam.mjs'
import { startEchoBackend } from './echo-backend'
import { startGateway, type RunningGateway } from './gateway'
import { startRedis, type RunningRedis } from './redis'
import { startWsBackend } from './ws-backend'

export type DevIam = Awaited<ReturnType<typeof startDevIam>>
export type EchoBackend = Awaited<ReturnType<typeof startEchoBackend>>
export type SampleBackend = Awaited<ReturnType<typeof startSampleBackend>>
export type WsBackend = Awaited<ReturnType<typeof startWsBackend>>

export interface StackOptions {
  /** The development IAM (on by default); `slowMs`: how long its `slow` scenario stalls; `accounts`: more accounts. */
  iam?: boolean | Pick<NonNullable<Parameters<typeof startDevIam>[0]>, 'slowMs' | 'accounts'>
  /**
   * The backend behind `/api/**`: the echo backend (default), the sample backend (checks permissions at the
   * development IAM), the WebSocket backend, or none. `backendPath` is appended to its address in APP_API_PROXY_TARGET.
   */
  backend?: 'echo' | 'sample' | 'ws' | 'none'
  backendPath?: string
  /** A real redis-server for the file (`stack.redis`); gateways get it only when their variables say so. */
  redis?: boolean
  /** Variables every gateway of the file gets, over the stack's own (APP_AUTH_BASE_URL, APP_API_PROXY_TARGET). */
  env?: Record<string, string>
  /** Starts one gateway for the whole file (`stack.gateway`) with these variables over the file's. */
  gateway?: Record<string, string>
}

/** What a test file runs against; each part is there once the file's `beforeAll` has run. */
export interface Stack {
  readonly iam: DevIam
  readonly echo: EchoBackend
  readonly sample: SampleBackend
  readonly ws: WsBackend
  readonly redis: RunningRedis
  /** The file's gateway (option `gateway`). */
  readonly gateway: RunningGateway
  /** The variables a gateway of this file starts with (the stack's addresses, then the file's `env`). */
  env: () => Record<string, string>
  /**
   * Another gateway with the file's variables and these, from the built playground or another server `entry`;
   * stopped when the file ends.
   */
  gatewayWith: (env?: Record<string, string>, entry?: string) => Promise<RunningGateway>
  /** Another gateway from variables of its own alone (plus the test secret); stopped when the file ends. */
  bareGateway: (env: Record<string, string>) => Promise<RunningGateway>
  /** Another redis-server (or one started again on a stopped one's `port`); stopped when the file ends. */
  redisServer: (port?: number) => Promise<RunningRedis>
}

/**
 * The one harness of the integration, WebSocket and browser tests: registers the file's `beforeAll`, which starts the
 * development IAM, a backend, a redis-server and a built gateway as asked, each on a free loopback port, and its
 * `afterAll`, which stops them in order (gateways first, so none sees its IAM or backend go away). Call it at the
 * top of the file.
 */
export function useStack(options: StackOptions = {}): Stack {
  const parts: Partial<{ iam: DevIam, echo: EchoBackend, sample: SampleBackend, ws: WsBackend, redis: RunningRedis, gateway: RunningGateway }> = {}
  const gateways: RunningGateway[] = []
  const redises: RunningRedis[] = []
  const backend = options.backend ?? 'echo'

  const part = <K extends keyof typeof parts>(name: K, option: string) => (): NonNullable<(typeof parts)[K]> => {
    const value = parts[name]
    if (!value) throw new Error(`the stack has no ${name}: ask for it with useStack({ ${option} }), and use it in a test or hook`)
    return value as NonNullable<(typeof parts)[K]>
  }
  const env = (): Record<string, string> => {
    const target = parts.echo?.url ?? parts.sample?.url ?? parts.ws?.url
    return {
      ...(parts.iam ? { APP_AUTH_BASE_URL: parts.iam.url } : {}),
      ...(target ? { APP_API_PROXY_TARGET: `${target}${options.backendPath ?? ''}` } : {}),
      ...options.env,
    }
  }
  const keep = (gateway: RunningGateway) => {
    gateways.push(gateway)
    return gateway
  }
  const redisServer = async (port?: number) => {
    const redis = await startRedis(port)
    redises.push(redis)
    return redis
  }

  beforeAll(async () => {
    const [iam, redis] = await Promise.all([
      options.iam === false ? undefined : startDevIam(typeof options.iam === 'object' ? options.iam : {}),
      options.redis ? redisServer() : undefined,
    ])
    Object.assign(parts, { iam, redis })
    if (backend === 'echo') parts.echo = await startEchoBackend()
    if (backend === 'sample') parts.sample = await startSampleBackend({ iamUrl: part('iam', 'iam: true')().url })
    if (backend === 'ws') parts.ws = await startWsBackend()
    if (options.gateway) parts.gateway = keep(await startGateway({ ...env(), ...options.gateway }))
  })
  afterAll(async () => {
    await Promise.all(gateways.splice(0).map(gateway => gateway.stop()))
    await Promise.all([parts.echo?.close(), parts.sample?.close(), parts.ws?.close(), parts.iam?.close()])
    await Promise.all(redises.splice(0).map(redis => redis.stop()))
  })

  const stack = {
    env,
    gatewayWith: async (extra = {}, entry?: string) => keep(await startGateway({ ...env(), ...extra }, entry)),
    bareGateway: async (own: Record<string, string>) => keep(await startGateway(own)),
    redisServer,
  }
  for (const [name, option] of [['iam', 'iam: true'], ['echo', 'backend: \'echo\''], ['sample', 'backend: \'sample\''], ['ws', 'backend: \'ws\''], ['redis', 'redis: true'], ['gateway', 'gateway: {}']] as const) {
    Object.defineProperty(stack, name, { get: part(name, option), enumerable: true })
  }
  return stack as Stack
}
