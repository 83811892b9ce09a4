/** The app adds its own header to every request the gateway proxies to the backend. */
export default defineNitroPlugin(() => {
  onProxyRequest((headers) => {
    headers['x-app'] = 'playground'
  })
})
