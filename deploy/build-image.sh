#!/bin/sh
# Builds the league runner's image (deploy/Containerfile) with whichever
# container engine is here (podman, buildah, docker: the first that
# answers), then prints the image's size.
#
#     deploy/build-image.sh [EXTRA BUILD ARGUMENTS...]
#
# IMAGE       the tag (default mancala-arena:latest)
# ENGINE      podman, buildah or docker, to choose one
# ENGINE_OPTS global options for the engine, before its build command
#             (e.g. "--storage-driver vfs" where overlay cannot be mounted)
#
# Extra arguments go to the build command, e.g. other base images:
#     deploy/build-image.sh --build-arg RUNTIME_IMAGE=mirror.example/debian:bookworm-slim
# ENGINE_OPTS is split into words on purpose.
# shellcheck disable=SC2086
set -eu

cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-mancala-arena:latest}
ENGINE_OPTS=${ENGINE_OPTS:-}

works() {
    case $1 in
        podman) podman $ENGINE_OPTS info >/dev/null 2>&1 ;;
        buildah) buildah $ENGINE_OPTS info >/dev/null 2>&1 ;;
        # The docker CLI alone is not enough: it needs a daemon.
        docker) docker info >/dev/null 2>&1 ;;
        *) return 1 ;;
    esac
}

if [ -z "${ENGINE:-}" ]; then
    for e in podman buildah docker; do
        if command -v "$e" >/dev/null 2>&1 && works "$e"; then
            ENGINE=$e
            break
        fi
    done
fi
if [ -z "${ENGINE:-}" ]; then
    echo "build-image.sh: no container engine answers here (podman, buildah, or docker with a running daemon)" >&2
    exit 1
fi

echo "building $IMAGE with $ENGINE" >&2
case $ENGINE in
    podman) podman $ENGINE_OPTS build -f deploy/Containerfile -t "$IMAGE" "$@" . ;;
    buildah) buildah $ENGINE_OPTS build -f deploy/Containerfile -t "$IMAGE" "$@" . ;;
    docker) docker build -f deploy/Containerfile -t "$IMAGE" "$@" . ;;
    *) echo "build-image.sh: unknown ENGINE $ENGINE" >&2; exit 1 ;;
esac

case $ENGINE in
    podman) bytes=$(podman $ENGINE_OPTS image inspect --format '{{.Size}}' "$IMAGE") ;;
    buildah) bytes=$(buildah $ENGINE_OPTS images --noheading --format '{{.Size}}' "$IMAGE") ;;
    docker) bytes=$(docker image inspect --format '{{.Size}}' "$IMAGE") ;;
esac
case $bytes in
    *[!0-9]*) echo "$IMAGE: $bytes" ;;
    *) echo "$IMAGE: $bytes bytes ($((bytes / 1048576)) MiB)" ;;
esac
