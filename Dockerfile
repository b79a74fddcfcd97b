# One Shardline node. The same image runs every node of a cluster; configure it with SHARDLINE_*.
# The CLI is bundled at build time (bin/cli.mjs), since the node user cannot write /app later:
#   docker compose exec node1 npm run -s cli -- keys list
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY schemas ./schemas
COPY src ./src
COPY cluster ./cluster
COPY bin ./bin
COPY tsconfig.json ./
RUN node bin/cli.mjs --build-only
# The node's own files (key-epochs ratchet, sealed devnet keys) live in /data, owned by the node
# user; compose mounts a volume per node there so they survive a restart of the container.
RUN mkdir -p /data && chown node:node /data
ENV SHARDLINE_DATA_DIR=/data
USER node
EXPOSE 8080 34431
CMD ["node", "--max-semi-space-size=64", "--import", "tsx", "cluster/main.ts"]
