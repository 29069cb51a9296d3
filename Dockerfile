# syntax=docker/dockerfile:1
# Herald: one image for every role. The role is the command: `docker run IMAGE api`, or
# `smtp`, `worker`, `webhooks`, `metrics`, `migrate`, ...; without one it runs `all` (every role in one
# process, for a single-machine install).
#
#   docker build -t herald:0.1.0 .
#   docker run --env-file .env -p 3000:3000 herald:0.1.0
#
# The Node.js version is pinned (matching the development machines); pin the digest too in
# release builds: --build-arg NODE_IMAGE=node:20.20.2-bookworm-slim@sha256:...
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# SCARF_ANALYTICS: a dependency's install script reports the install to a third party otherwise.
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false SCARF_ANALYTICS=false
# node-gyp's toolchain, for any dependency that compiles a native addon at install time.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# --ignore-scripts: the project's own `prepare` script builds, and the sources are not here
# yet (this layer is cached until the lock file changes). `npm rebuild` then runs the
# dependencies' install scripts, which --ignore-scripts skipped; it runs no root script.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts && npm rebuild
COPY . .
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only to the process: the running app cannot rewrite its own code.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
# The image's `node` user, by number so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# api 3000; ops (health, metrics) 9464; SMTP 25, 465, 587 and the unprivileged 2465, 2587.
EXPOSE 3000 9464 25 465 587 2465 2587
# Node runs as PID 1: Herald handles SIGTERM itself (drains, then closes its connections).
ENTRYPOINT ["node", "bin/herald.js"]
CMD ["all"]
