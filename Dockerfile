# One Shardline node. The same image runs every node of a cluster; configure it with SHARDLINE_*.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY schemas ./schemas
COPY src ./src
COPY cluster ./cluster
COPY tsconfig.json ./
USER node
EXPOSE 8080 34431
CMD ["node", "--import", "tsx", "cluster/main.ts"]
