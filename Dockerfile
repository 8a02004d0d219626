# The Napwake image: one binary, several roles (`operator` by default; the doorman and webhook later).
# There is no compile step: Node.js 24 runs the TypeScript sources directly by stripping types
# (docs/decisions/0001-run-typescript-with-node-type-stripping.md), so the image carries sources and
# production node_modules.
#
#   docker build -t napwake:dev .
#
# Not built in this repository's CI: the development environment has no container engine. The install
# manifests (manifests/base, kustomize/) refer to it as napwake:dev; overlays pin a registry tag.

# --- dependencies: production only, exactly as locked ---
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The `node` devDependency (npm's Node 24 for scripts) is omitted with the rest of devDependencies.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force

# --- runtime: distroless Node.js 24, no shell, no package manager, user nonroot (65532) ---
FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
# Sources: what .dockerignore lets through (runtime directories; no tests, docs or tooling). Owned by
# root and only readable by the nonroot user: the process cannot rewrite its own code.
COPY . .
COPY --from=deps /app/node_modules ./node_modules
USER 65532:65532
# Webhooks (HTTPS), metrics (HTTPS), health (HTTP).
EXPOSE 9443 8443 8081
ENTRYPOINT ["/nodejs/bin/node", "bin/napwake.ts"]
CMD ["operator"]
