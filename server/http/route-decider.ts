// The virtual module's type must reach every program that compiles this file (Nuxt's app types import the routes).
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="../gateway-routes.d.ts" />
// Generated at build time (see nuxt.config.ts): every route of Nitro's router, the gateway's /api/** catch-all marked.
import ruleHeaders from '#svc-gateway/route-headers'
import routes from '#svc-gateway/routes'
import { ruleHeadersOf } from '../core/http/route-headers'
import { createRouteDecider, rememberedApiDecisions, type ApiDecision, type RouteDecider } from '../core/http/route-match'

let decider: RouteDecider | undefined
let apiDecider: ((path: string, method: string) => ApiDecision) | undefined

/** What Nitro's router would route a (router path, lower-case method) to; built once from the build's routes. */
export function useRouteDecider(): RouteDecider {
  decider ??= createRouteDecider(routes)
  return decider
}

/** How the request gate serves a (router path, lower-case method) under /api: proxy, route or refuse (remembered). */
export function useApiDecider(): (path: string, method: string) => ApiDecision {
  apiDecider ??= rememberedApiDecisions(useRouteDecider())
  return apiDecider
}

/**
 * The app's route rules `headers` for a router path (undefined for none), as Nitro would set them; read at build
 * time. Undefined itself when the app has no such rule: the proxy then does nothing for them.
 */
export const proxiedRuleHeaders = ruleHeaders.length ? ruleHeadersOf(ruleHeaders) : undefined
