import { defineEventHandler } from 'h3'
import { isGatewayPath, refuseCrossOrigin } from '../utils/cross-origin'

/** Cross-origin protection for unsafe methods on /auth/** and /api/** (see server/core/origin-check.ts). */
export default defineEventHandler((event) => {
  const { req, res } = event.node
  if (isGatewayPath(req.url ?? '')) refuseCrossOrigin(req, res)
})
