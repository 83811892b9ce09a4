/** A route of the app for a specific /api path: it wins over the gateway's /api/** proxy. */
export default defineEventHandler(() => ({ ok: true, servedBy: 'playground' }))
