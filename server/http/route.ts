import { defineEventHandler, type EventHandlerRequest, type H3Event } from 'h3'
import { encodeLocation } from '../../shared/redirect'
import { sendGatewayError, toGatewayError } from './errors'

/**
 * A contract route under /auth: answers carry `Cache-Control: no-store`, and any error becomes the contract's JSON
 * error body (see sendGatewayError).
 */
export function defineGatewayRoute<T>(handler: (event: H3Event<EventHandlerRequest>) => Promise<T> | T) {
  return defineEventHandler(async (event) => {
    event.node.res.setHeader('cache-control', 'no-store')
    try {
      return await handler(event)
    }
    catch (error) {
      sendGatewayError(event.node.res, toGatewayError(error))
    }
  })
}

/** A 302 to `location` (a path of ours, or the OpenID Provider's address), encoded as a Location header must be. */
export function redirectTo(event: H3Event, location: string): void {
  const res = event.node.res
  res.statusCode = 302
  res.setHeader('location', encodeLocation(location))
  res.end()
}
