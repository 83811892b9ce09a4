export default defineAppConfig({
  svcAuth: { productName: 'Quản lý đơn hàng', logoUrl: '/logo.svg' },
})
