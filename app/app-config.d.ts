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
      /** Language of the layer's pages: 'vi', 'en', or 'auto' (the browser's languages). @default 'vi' */
      locale?: 'vi' | 'en' | 'auto'
      /** Seconds between a visible tab's checks that its session was not ended elsewhere; 0: off. @default 20 */
      sessionCheckSeconds?: number
      /** Texts to replace, per language and section (keys in shared/messages/vi.ts). @default {} */
      messages?: import('../shared/messages').MessageOverrides
    }
  }
}

export {}
