# lazuli's container image: one static binary on an empty base, run as a
# user without privileges, data in the /data volume. scripts/image.sh
# builds the same image without a Docker daemon (a test checks that the
# two agree): docker build -t lazuli .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version --version reports (docker build --build-arg VERSION=v1.2.3);
# the build context holds no .git to take a commit from.
ARG VERSION=devel
# The rootfs: the binary, the reference emulator's command names as links
# to it (Testcontainers' modules run "azurite"), and /data for the user.
RUN mkdir -p /rootfs/usr/local/bin /rootfs/data && \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" -o /rootfs/usr/local/bin/lazuli ./cmd/lazuli && \
    for name in azurite azurite-blob azurite-queue azurite-table; do ln -s lazuli /rootfs/usr/local/bin/$name; done && \
    chown 65532:65532 /rootfs/data

FROM scratch
COPY --from=build /rootfs/usr /usr
COPY --from=build --chown=65532:65532 /rootfs/data /data
# Defaults that hold whatever command replaces CMD (Testcontainers' modules
# pass their own): every listener on all interfaces, data in the volume.
ENV PATH=/usr/local/bin
ENV LAZULI_LOCATION=/data
ENV LAZULI_BLOB_HOST=0.0.0.0
ENV LAZULI_QUEUE_HOST=0.0.0.0
ENV LAZULI_TABLE_HOST=0.0.0.0
ENV LAZULI_FILE_HOST=0.0.0.0
ENV LAZULI_SMB_HOST=0.0.0.0
# The admin listener too: beyond loopback it asks for an account and its
# key, except for /healthz and /readyz, which probes can reach.
ENV LAZULI_ADMIN_HOST=0.0.0.0
LABEL org.opencontainers.image.title=lazuli
LABEL org.opencontainers.image.description="Azure Storage (Blob, Queue, Table, Files, SMB) server, a drop-in for the reference emulator"
LABEL org.opencontainers.image.source=https://github.com/lazuli-storage/lazuli
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 10000/tcp 10001/tcp 10002/tcp 10003/tcp 10445/tcp 10010/tcp
ENTRYPOINT ["/usr/local/bin/lazuli"]
CMD ["--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0", "--tableHost", "0.0.0.0", "--fileHost", "0.0.0.0", "--smbHost", "0.0.0.0", "--location", "/data"]
