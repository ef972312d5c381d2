# Bunting's container image: the static bunting binary on an empty base,
# running as an unprivileged user, with its SQLite data on a volume.
#
# Build it with `make image` (docs/deployment.md#container-image). make
# compiles the binary on the host (CGO_ENABLED=0, with the Go build cache)
# and stages it under build/image/ with the host's CA bundle and an
# /etc/passwd naming the bunting user; this file assembles what is staged.
# Nothing is pulled: no base image, no toolchain image, so the build works
# offline and takes seconds.
FROM scratch

ARG VERSION=dev
ARG REVISION=
ARG CREATED=
ARG SOURCE=https://github.com/bunting-flags/bunting
ARG LICENSES=Apache-2.0

# /usr/local/bin/bunting, /etc/ssl/certs/ca-certificates.crt, /etc/passwd,
# /etc/group and /tmp (1777), all owned by root.
COPY rootfs/ /
# The data directory, owned by the user the server runs as.
COPY --chown=65532:65532 data/ /data/

USER 65532:65532
WORKDIR /data
ENV DATABASE_PATH=/data/bunting.db
VOLUME ["/data"]
# 4242: the flag server (web UI, admin, client and frontend APIs).
# 3000: the client proxy (`bunting proxy`, or both in one process).
EXPOSE 4242 3000

LABEL org.opencontainers.image.title="Bunting" \
      org.opencontainers.image.description="Open-source feature-flag service that speaks the Unleash protocols" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="${LICENSES}"

# `server`, `proxy` or nothing (both in one process) selects the mode.
ENTRYPOINT ["/usr/local/bin/bunting"]
