import { createError, defineEventHandler, readBody } from 'h3'

/**
 * An administrator ends every session of a user (an account being disabled): the layer's revokeUserSessions, from
 * the app's own server code. The demo's rule: only the 'admin' role may call it.
 */
export default defineEventHandler(async (event) => {
  const session = readGatewaySession(event)
  if (!session) throw createError({ statusCode: 401, statusMessage: 'Unauthorized' })
  if (!session.user.roles.includes('admin')) throw createError({ statusCode: 403, statusMessage: 'Forbidden' })
  const body = await readBody<{ userId?: unknown }>(event)
  if (typeof body?.userId !== 'string' || !body.userId) throw createError({ statusCode: 400, statusMessage: 'userId required' })
  await revokeUserSessions(body.userId)
  return { revoked: body.userId }
})
