declare module '@nuxt/schema' {
  interface AppConfigInput {
    svcAuth?: {
      /** Minutes before the session's end when useSessionExpiry() says `expiringSoon`. @default 5 */
      expiryWarningMinutes?: number
    }
  }
}

export {}
