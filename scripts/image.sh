#!/usr/bin/env bash
# Builds lazuli's container image without a Docker daemon, as an OCI
# archive (an OCI image layout in a tar file), with umoci (Debian package
# umoci) and GNU tar. The image is the one the Dockerfile describes (a
# test checks that they agree): the static binary and the reference
# emulator's command names as links to it, /data owned by the user 65532,
# which the image runs as.
#
#   scripts/image.sh [archive [tag]]      # default: lazuli-image.tar, latest
#   VERSION=v1.2.3 scripts/image.sh       # the version --version reports
#
# Load it with `podman load -i lazuli-image.tar` or
# `skopeo copy oci-archive:lazuli-image.tar docker-daemon:lazuli:latest`.
set -euo pipefail
cd "$(dirname "$0")/.."
archive=$(realpath -m "${1:-lazuli-image.tar}")
tag=${2:-latest}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
# The commit's time as the image's: the same commit gives the same image.
created=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
command -v umoci >/dev/null || { echo "umoci is needed (apt-get install umoci)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root/usr/local/bin" "$root/data"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$root/usr/local/bin/lazuli" ./cmd/lazuli
for name in azurite azurite-blob azurite-queue azurite-table; do
  ln -s lazuli "$root/usr/local/bin/$name"
done
chmod 0755 "$root/usr" "$root/usr/local" "$root/usr/local/bin" "$root/data"

# One layer, written by tar itself so that ownership needs no privileges:
# everything root's but /data, which is the user's. Fixed times and order
# make the layer the same for the same binary.
tar --create --file "$work/layer.tar" --directory "$root" --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 usr
tar --append --file "$work/layer.tar" --directory "$root" --mtime=@0 --numeric-owner --owner=65532 --group=65532 data

layout=$work/layout
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci raw add-layer --image "$layout:$tag" --history.created "$created" --history.created_by "scripts/image.sh: lazuli $version" "$work/layer.tar"
umoci config --image "$layout:$tag" --os linux --architecture "$(go env GOARCH)" \
  --author "lazuli" --created "$created" --history.created "$created" --history.created_by "scripts/image.sh: config" \
  --config.env PATH=/usr/local/bin \
  --config.env LAZULI_LOCATION=/data \
  --config.env LAZULI_BLOB_HOST=0.0.0.0 \
  --config.env LAZULI_QUEUE_HOST=0.0.0.0 \
  --config.env LAZULI_TABLE_HOST=0.0.0.0 \
  --config.env LAZULI_FILE_HOST=0.0.0.0 \
  --config.env LAZULI_SMB_HOST=0.0.0.0 \
  --config.env LAZULI_ADMIN_HOST=0.0.0.0 \
  --config.label org.opencontainers.image.title=lazuli \
  --config.label "org.opencontainers.image.description=Azure Storage (Blob, Queue, Table, Files, SMB) server, a drop-in for the reference emulator" \
  --config.label org.opencontainers.image.source=https://github.com/lazuli-storage/lazuli \
  --config.label "org.opencontainers.image.version=$version" \
  --config.user 65532:65532 \
  --config.workingdir /data \
  --config.volume /data \
  --config.exposedports 10000/tcp --config.exposedports 10001/tcp --config.exposedports 10002/tcp \
  --config.exposedports 10003/tcp --config.exposedports 10445/tcp --config.exposedports 10010/tcp \
  --config.entrypoint /usr/local/bin/lazuli \
  --config.cmd --blobHost --config.cmd 0.0.0.0 --config.cmd --queueHost --config.cmd 0.0.0.0 \
  --config.cmd --tableHost --config.cmd 0.0.0.0 --config.cmd --fileHost --config.cmd 0.0.0.0 \
  --config.cmd --smbHost --config.cmd 0.0.0.0 --config.cmd --location --config.cmd /data
umoci gc --layout "$layout"

rm -f "$archive"
tar --create --file "$archive" --directory "$layout" --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 .
echo "image: $archive ($tag, lazuli $version)"
