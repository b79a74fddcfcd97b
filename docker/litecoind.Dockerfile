# litecoind for docker-compose.yml: the binary is installed when the image is built, not at
# container start, so the node starts offline and at once. Regtest settings are the service's
# command; litecoin-cli (same package) is its healthcheck.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends litecoind \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 1000 litecoin
USER litecoin
WORKDIR /home/litecoin
EXPOSE 19443
ENTRYPOINT ["litecoind"]
