/** The layer's app config: a product app overrides any key in its own app.config.ts. */
export default defineAppConfig({
  svcAuth: {
    /** Minutes before the session's end when useSessionExpiry() says `expiringSoon`. @default 5 */
    expiryWarningMinutes: 5,
    /** The product's name, shown on the login page. @default '' (none) */
    productName: '',
    /** Address of the product's logo for the login page (for example '/logo.svg' from the app's public/). @default '' */
    logoUrl: '',
    /** The page after login when the login page has no internal `redirect`. @default '/' */
    homePath: '/',
    /**
     * Language of the layer's pages (login, error, logout confirmation): 'vi', 'en', or 'auto' (the browser's
     * languages; Accept-Language in the server render). The JSON answers keep the contract's Vietnamese. @default 'vi'
     */
    locale: 'vi' as 'vi' | 'en' | 'auto',
    /**
     * Seconds between a visible tab's checks that its session was not ended elsewhere (another browser's list of
     * sessions, an administrator): GET /auth/verify, no IAM call, no activity; also when a tab comes into view. 0: off.
     * @default 20
     */
    sessionCheckSeconds: 20,
    /** Texts to replace, per language and section (shared/messages/vi.ts lists every key): `{ en: { login: { title: 'Welcome' } } }`. @default {} */
    messages: {},
  },
})
