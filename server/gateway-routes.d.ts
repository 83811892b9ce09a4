declare module '#svc-gateway/routes' {
  /** Every route of Nitro's router (the app's, Nuxt's and the gateway's), the gateway's /api/** catch-all marked. */
  const routes: Array<{ route: string, method?: string, proxy?: boolean }>
  export default routes
}

declare module '#nitro-internal-pollyfills' {
  // Nitro's polyfills for the target, imported first by every entry (server/node-server.ts): nothing to import by name.
}

declare module 'nitropack/runtime/internal' {
  /** Runs the app's scheduled Nitro tasks (Nitro's own node-server entry starts it the same way). */
  export function startScheduleRunner(): void
}

declare module '#svc-gateway/route-headers' {
  /** The app's route rules that set headers (pattern, headers), read at build time. */
  const rules: Array<{ route: string, headers: Record<string, string> }>
  export default rules
}
