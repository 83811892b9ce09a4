/** An app route with an unsafe method under /api: the cross-origin rule covers it like every other path. */
export default defineEventHandler(() => ({ ok: true, servedBy: 'playground' }))
