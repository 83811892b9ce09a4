declare module '@nuxt/schema' {
  interface AppConfigInput {
    svcAuth?: {
      /** Minutes before the session's end when useSessionExpiry() says `expiringSoon`. @default 5 */
      expiryWarningMinutes?: number
      /** The product's name, shown on the login page. */
      productName?: string
      /** Address of the product's logo for the login page. */
      logoUrl?: string
      /** The page after login when the login page has no internal `redirect`. @default '/' */
      homePath?: string
    }
  }
}

export {}
