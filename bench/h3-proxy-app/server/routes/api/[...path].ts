import { getRouterParam, proxyRequest } from 'h3'

export default defineEventHandler(event =>
  proxyRequest(event, `${useRuntimeConfig().target}/${getRouterParam(event, 'path') ?? ''}`))
