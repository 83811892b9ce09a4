# syntax=docker/dockerfile:1
# svc-auth-gateway in a product app: copy this file and .dockerignore to the app's root, then
#   docker build -t orders-web .
#   docker run -p 3000:3000 -e APP_SESSION_SECRET=... -e APP_AUTH_BASE_URL=... -e APP_API_PROXY_TARGET=... orders-web
# It builds the app at the build context's root (SOURCE_DIR=.); in this repository, --build-arg SOURCE_DIR=playground
# builds the playground. Node: the newest LTS line the layer supports (package.json's engines).
# test/consumer/consumer.test.ts runs the build stage as a script in a fresh app, on this Node.

# --- build: every dependency, then `nuxt build` -------------------------------------------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /src
# A layer installed from a packed tarball (npm install ./svc-auth-gateway-0.1.0.tgz) is in the lockfile as a file at
# the app's root: it comes in with the lockfile, or npm ci cannot find it.
COPY package.json package-lock.json *.tgz ./
RUN npm ci --no-audit --no-fund
COPY . .
ARG SOURCE_DIR=.
# The output goes to /src/.image-output, whatever SOURCE_DIR is, where the run stage takes it.
RUN npx nuxt build "$SOURCE_DIR" && cp -r "$SOURCE_DIR/.output" .image-output

# --- run: only the built output (it carries its own node_modules), as the unprivileged 'node' user -----------------
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build --chown=node:node /src/.image-output ./.output
# The revocation journal's folder (APP_REVOCATION_JOURNAL): a volume is mounted here; the node user owns it.
RUN mkdir -p /var/lib/svc-gateway && chown node:node /var/lib/svc-gateway
USER node
# 3000: the gateway; 9464: Prometheus metrics when APP_METRICS_PORT=9464 and APP_METRICS_HOST=0.0.0.0 are set (the
# listener binds loopback by default: it has no authentication).
EXPOSE 3000 9464
# SIGTERM: stop accepting, /readyz 503, let requests finish for APP_SHUTDOWN_TIMEOUT seconds (default 30), exit 0.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", ".output/server/index.mjs"]
