/** The layer's app config: a product app overrides any key in its own app.config.ts. */
export default defineAppConfig({
  svcAuth: {
    /** Minutes before the session's end when useSessionExpiry() says `expiringSoon`. @default 5 */
    expiryWarningMinutes: 5,
  },
})
