import { MOCK_CLIENTS } from '../../core/iam/mock'
import { defineGatewayRoute } from '../../http/route'
import { cachedIamClients } from '../../iam/auth'
import { requireIamBaseUrl } from '../../iam/client'
import { useGatewayConfig } from '../../ops/config'
import { useLogger } from '../../ops/logger'

/** GET /auth/clients: the applications of the login form; an IAM failure is an empty list and a warning. */
export default defineGatewayRoute(async () => {
  const { config } = useGatewayConfig()
  if (config.mock) return { clients: MOCK_CLIENTS }
  if (config.kind === 'oidc') return { clients: [] }
  requireIamBaseUrl()
  if (!config.endpoints.clients) return { clients: [] }
  try {
    return { clients: await cachedIamClients() }
  }
  catch (error) {
    useLogger().warn({ error: error instanceof Error ? error.message : String(error) }, 'không lấy được danh sách ứng dụng từ IAM')
    return { clients: [] }
  }
})
