export default defineAppConfig({
  svcAuth: {
    productName: 'Quản lý đơn hàng',
    logoUrl: '/logo.svg',
    // The layer's pages speak the browser's language (Vietnamese or English); this app's own pages stay Vietnamese.
    locale: 'auto',
    // A session ended from another browser's list of sessions sends this app's tabs to the login page within seconds.
    sessionCheckSeconds: 5,
    // One of the layer's texts in this app's own words (any key of shared/messages/vi.ts, per language).
    messages: { en: { login: { lead: 'Use your company account (IAM) to manage orders.' } } },
  },
})
