# Cartograph as a container image: `docker build -t cartograph .`, then
#   docker run --rm --network host -v "$PWD:/work" --user "$(id -u):$(id -g)" \
#     cartograph run openapi.yaml --target http://127.0.0.1:8080
# The working directory /work is where descriptions are read and
# cartograph-out/ is written; --user keeps the files yours.

# Build stage: the Rust toolchain the crate's rust-version asks for.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# The manifest first, so that a change to the sources does not fetch the
# dependencies again.
COPY Cargo.toml Cargo.lock ./
COPY benches ./benches
COPY models ./models
COPY src ./src
RUN cargo build --profile dist --locked --bin cartograph

# Run stage: a small Debian with CA certificates (HTTPS targets) and the
# tools the reproducer scripts use (bash, curl, jq).
FROM debian:bookworm-slim
# Debian's stable packages are not pinned: bookworm only ships security fixes.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl jq \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin cartograph \
    && mkdir /work && chown cartograph /work
COPY --from=build /src/target/dist/cartograph /usr/local/bin/cartograph
USER 10001
WORKDIR /work
ENTRYPOINT ["cartograph"]
CMD ["--help"]
