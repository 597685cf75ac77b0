# Podium in a container: `docker build -t podium .` then see compose.yaml.
# Untested here (this project's machines run no Docker daemon and pull no image); what it runs
# is tested: `cargo install --path host` serving from a config file (tests/all/packaging.rs).

# The build: the binary and the bundled plugins (built for wasm32-wasip2 by host/build.rs).
FROM rust:1.95-bookworm AS build
RUN rustup target add wasm32-wasip2
WORKDIR /src
COPY . .
RUN cargo build --locked --release -p podium \
    && install -m 0755 target/release/podium /usr/local/bin/podium

# The runtime: the binary, CA certificates for BMCs with public certificates, curl for the
# health check, and an unprivileged user owning the data directory.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/podium --create-home podium
COPY --from=build /usr/local/bin/podium /usr/local/bin/podium
USER podium
WORKDIR /var/lib/podium
ENV PODIUM_LISTEN=0.0.0.0:8080 \
    PODIUM_DATA_DIR=/var/lib/podium \
    PODIUM_LOG_JSON=true
VOLUME ["/var/lib/podium"]
EXPOSE 8080
# Liveness: the process answers (no token, no database: /healthz is the readiness probe).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
    CMD curl -fsS http://127.0.0.1:8080/livez || exit 1
# SIGTERM hands running operations back to the other replicas (docs/operations.md); give
# `docker stop` more time than --shutdown-grace (`stop_grace_period` in compose.yaml).
STOPSIGNAL SIGTERM
ENTRYPOINT ["podium"]
CMD ["serve"]
