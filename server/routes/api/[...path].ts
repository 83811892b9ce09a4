import { defineEventHandler } from 'h3'
import { proxyApiRequest } from '../../utils/api-proxy'

/** Any method on /api/**: the streaming proxy to APP_API_PROXY_TARGET. A more specific route of the app wins. */
export default defineEventHandler(event => proxyApiRequest(event.node.req, event.node.res))
