# The imagegen image: the API, the worker, the webhook dispatcher and the documentation site, one
# program whose roles IMAGEGEN_ROLES picks (deploy/kubernetes/ runs it so). Built with
#
#   docker build -t registry.example.com/imagegen:1.0.0 .
#
# (or podman build). BASE is any Debian-based image with Node.js 20.19 or later and npm on PATH;
# the default is the official Node image of the version the project supports.
ARG BASE=node:22-bookworm-slim

# ---- manifests: what npm ci reads, copied first so that both stages' dependency layers are
# reused while only sources change ----
FROM ${BASE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/app/package.json packages/app/
COPY packages/client/package.json packages/client/
COPY packages/comfyui-fake/package.json packages/comfyui-fake/
COPY packages/contract/package.json packages/contract/
COPY packages/db/package.json packages/db/
COPY packages/docs/package.json packages/docs/
COPY packages/engine-comfyui/package.json packages/engine-comfyui/
COPY packages/engine-cpu/package.json packages/engine-cpu/
COPY packages/engine-sandbox/package.json packages/engine-sandbox/
COPY packages/engines/package.json packages/engines/
COPY packages/search/package.json packages/search/
COPY packages/server/package.json packages/server/
COPY bench/package.json bench/
COPY e2e/package.json e2e/

# ---- npm-cache: empty. A build may be handed a machine's npm cache in its place
# (`--build-context npm-cache=$(npm config get cache)`, as deploy/image/smoke.sh --reuse does): both
# npm ci steps then take the packages from it, fetching only what it lacks (into it) ----
FROM scratch AS npm-cache

# ---- build: every dependency (TypeScript, Docusaurus) and the JavaScript build ----
FROM ${BASE} AS build
WORKDIR /app
COPY --from=manifests /app ./
# npm's download cache lives in a build cache, outside the layers, shared by both stages.
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    --mount=type=bind,from=npm-cache,target=/npm-cache,rw \
    npm ci --no-audit --no-fund --prefer-offline \
      --cache "$(if [ -d /npm-cache/_cacache ]; then echo /npm-cache; else echo /root/.npm; fi)"
COPY . .
# The packages to packages/*/dist (`npm run build` is this, then the docs site).
RUN npm run build:packages

# ---- docs-build: the documentation site, built from the sources above ----
FROM build AS docs-build
RUN npm run build:docs

# ---- docs-site: the built site alone. A build may be handed the site already built from the same
# sources in its place (`--build-context docs-site=packages/docs/build`, as CI does with the site its
# tests built): static files, the same wherever they were built; docs-build is then skipped ----
FROM scratch AS docs-site
COPY --from=docs-build /app/packages/docs/build /

# ---- runtime: production dependencies of the program that starts the roles (packages/app), the
# built files, a non-root user ----
FROM ${BASE} AS runtime
ARG BASE
ARG VERSION=1.0.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="imagegen" \
      org.opencontainers.image.description="Self-hostable image-generation API and its documentation site" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="UNLICENSED" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${BASE}"
ENV NODE_ENV=production \
    API_HOST=0.0.0.0 \
    IMAGEGEN_DATA_DIR=/data
WORKDIR /app
COPY --from=manifests /app ./
# Only what the program needs at run time: its dependencies and those of the packages it imports
# (server, docs host, engines, ...); no TypeScript loader, no Docusaurus (the site is already built).
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    --mount=type=bind,from=npm-cache,target=/npm-cache,rw \
    npm ci --omit=dev --workspace=packages/app --no-audit --no-fund --prefer-offline \
      --cache "$(if [ -d /npm-cache/_cacache ]; then echo /npm-cache; else echo /root/.npm; fi)"
COPY --from=build /app/packages/app/dist packages/app/dist
COPY --from=build /app/packages/contract/dist packages/contract/dist
COPY --from=build /app/packages/db/dist packages/db/dist
COPY --from=build /app/packages/engines/dist packages/engines/dist
COPY --from=build /app/packages/engine-comfyui/dist packages/engine-comfyui/dist
COPY --from=build /app/packages/engine-cpu/dist packages/engine-cpu/dist
COPY --from=build /app/packages/engine-sandbox/dist packages/engine-sandbox/dist
COPY --from=build /app/packages/search/dist packages/search/dist
COPY --from=build /app/packages/server/dist packages/server/dist
COPY --from=build /app/packages/docs/dist packages/docs/dist
COPY --from=docs-site / packages/docs/build
# The bundled PostgreSQL refuses to run as root, and nothing here needs root.
RUN groupadd --system imagegen \
 && useradd --system --gid imagegen --home-dir /app --no-create-home imagegen \
 && mkdir -p /data \
 && chown imagegen:imagegen /data
USER imagegen
VOLUME ["/data"]
EXPOSE 8000 8001 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const port = process.env.IMAGEGEN_ROLES && !process.env.IMAGEGEN_ROLES.includes('api') ? process.env.HEALTH_PORT || 8001 : process.env.API_PORT || 8000; fetch('http://127.0.0.1:' + port + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--conditions=imagegen-build", "packages/app/dist/src/start.js"]
