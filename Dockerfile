# Lattice on the active Node.js LTS (26): one image for the API (`serve`, the default) and the job consumers (`worker`).
#   docker build -t lattice .
#   docker run -p 8080:8080 lattice                 # embedded default (PGlite under /app/data)
#   docker run -e DATABASE_URL=... -e REDIS_URL=... lattice worker

# --- build: install every dependency, compile, then drop the dev dependencies -----------------
FROM node:26-bookworm-slim AS build
WORKDIR /app

# Installed as .ci/run installs: `npm install` following the lock file (`npm ci` refuses it: the
# registry lacks msgpackr-extract's optional builds for other platforms, so the lock cannot list
# them), with .npmrc and package.json's allowScripts deciding which install scripts run (none).
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
COPY console ./console
RUN npm run build

RUN npm prune --omit=dev --no-audit --no-fund

# --- runtime ----------------------------------------------------------------------------------
FROM node:26-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app

# The package root is found by its package.json; migrations are read from <root>/migrations at
# run time, and the Piscina worker pool loads <root>/dist/workers/index.js.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY bin ./bin

# `lattice <command>` on the PATH, and a data directory the unprivileged user can write for the
# embedded default (DATA_DIR=./data resolves to /app/data).
RUN chmod 0755 bin/lattice.js \
 && ln -s /app/bin/lattice.js /usr/local/bin/lattice \
 && mkdir -p /app/data \
 && chown node:node /app/data

USER node
# The service listens on loopback unless HOST says otherwise; in a container it must listen on
# every interface for the published port to reach it.
ENV HOST=0.0.0.0
EXPOSE 8080

# `docker run IMAGE` serves; `docker run IMAGE worker` (or migrate, project ..., key ...) runs
# another command of the same CLI. Inside a running container, `lattice <command>` works too.
ENTRYPOINT ["node", "dist/src/cli.js"]
CMD ["serve"]
