# anvil for docker-compose.yml, at the version the tests use (package.json devDependencies):
# the npm package carries the binary for the image's platform, installed at build time.
FROM node:20-bookworm-slim
RUN npm install --global --no-audit --no-fund @foundry-rs/anvil@1.7.1 && npm cache clean --force
USER node
EXPOSE 8545
ENTRYPOINT ["anvil"]
