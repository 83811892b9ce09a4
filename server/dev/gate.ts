import { Socket } from 'node:net'
import { defineEventHandler } from 'h3'
import { gateRequest } from '../gate/gate'
import { answerProbe } from '../gate/probes'
import { answerVerify } from '../verify/forward-auth'

/**
 * The request gate under `nuxt dev`, as a server middleware ahead of every route (nuxt.config.ts adds it in
 * development only; Nitro runs the app's own scanned middleware before it):
 * Nitro's development server is Nitro's own, not the gateway's (server/node-server.ts), so the gate runs inside h3.
 * What the gate refuses, a probe and the forward-auth check end here; what it sends to the proxy is served by the
 * /api/** route.
 * Internal calls (SSR $fetch, no socket) never pass the gate, as in production.
 */
export default defineEventHandler((event) => {
  const { req, res } = event.node
  if (!(req.socket instanceof Socket)) return
  const scope = gateRequest(req, res)
  if (scope.route === 'probe') void answerProbe(scope.probe!, req, res)
  else if (scope.route === 'verify') answerVerify(req, res, scope.client)
  else if (scope.route !== 'answered') return
  // A probe may still be answering: h3 goes on to the router unless the answer is complete.
  return new Promise<void>(resolve => res.writableEnded ? resolve() : res.once('close', () => resolve()))
})
