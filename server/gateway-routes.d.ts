declare module '#svc-gateway/routes' {
  /** Every route of Nitro's router (the app's, Nuxt's and the gateway's), the gateway's /api/** catch-all marked. */
  const routes: Array<{ route: string, method?: string, proxy?: boolean }>
  export default routes
}
