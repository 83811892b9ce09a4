import { defineEventHandler, type EventHandlerRequest, type H3Event } from 'h3'
import { sendGatewayError, toGatewayError } from './gateway-error'

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
