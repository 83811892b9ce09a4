declare module '#app' {
  interface PageMeta {
    /** false makes the page public; every other page needs a session. */
    auth?: boolean
    /** Permission URIs the page needs (all of them). */
    permissions?: string[]
  }
}

export {}
