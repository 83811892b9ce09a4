declare module '#svc-gateway/app-api-routes' {
  /** Route patterns of the app under /api (from its server/routes and modules), without the gateway's catch-all. */
  const routes: string[]
  export default routes
}
