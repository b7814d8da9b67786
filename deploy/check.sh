#!/bin/sh
# Checks deploy/'s files offline against their schemas:
#
#   - the Kubernetes manifests: deploy/kustomization.yaml rendered (by
#     `kubectl kustomize`, or `kustomize build`; without either, the files
#     of deploy/k8s/ one by one, less the generated ConfigMap), and
#     deploy/k8s-league-job.yaml, by kubernetes-validate --strict (PyPI;
#     it bundles the API's schemas: Kubernetes 1.37 by default, K8S_VERSION
#     to choose), which refuses unknown fields too;
#   - deploy/compose.yaml, by check-jsonschema against the Compose
#     Specification's schema that it bundles (vendor.compose-spec); then
#     by `docker compose config` or `podman-compose config` where one of
#     them runs here and has it (with stand-in values for the file's
#     variables).
#
# The two Python tools are installed, pinned, into a virtual environment
# of their own (ARENA_CHECK_VENV, default ${TMPDIR:-/tmp}/arena-deploy-check)
# when they are not on PATH. Exit status 0 when every check passed.
set -eu

cd "$(dirname "$0")"
venv=${ARENA_CHECK_VENV:-${TMPDIR:-/tmp}/arena-deploy-check}
k8s_version=${K8S_VERSION:-1.37.0}
say() { echo "deploy/check.sh: $*" >&2; }

tool() {
    if command -v "$1" >/dev/null 2>&1; then
        command -v "$1"
        return
    fi
    if [ ! -x "$venv/bin/$1" ]; then
        say "installing $2 into $venv"
        [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" >&2
        "$venv/bin/pip" install --quiet "$2" >&2
    fi
    echo "$venv/bin/$1"
}

kv=$(tool kubernetes-validate kubernetes-validate==1.37.0)
cj=$(tool check-jsonschema check-jsonschema==0.39.0)

rendered=$(mktemp)
trap 'rm -f "$rendered"' EXIT
if command -v kubectl >/dev/null 2>&1 && kubectl kustomize . >"$rendered" 2>/dev/null; then
    say "manifests rendered by kubectl kustomize"
    manifests="$rendered"
elif command -v kustomize >/dev/null 2>&1 && kustomize build . >"$rendered"; then
    say "manifests rendered by kustomize build"
    manifests="$rendered"
else
    say "no kubectl or kustomize: checking deploy/k8s/*.yaml one by one (the ConfigMap of ladder.toml is not made)"
    manifests=$(ls k8s/*.yaml)
fi
# shellcheck disable=SC2086
"$kv" --strict --quiet -k "$k8s_version" $manifests k8s-league-job.yaml
say "Kubernetes manifests: valid for $k8s_version (strict)"

"$cj" --builtin-schema vendor.compose-spec compose.yaml >&2
say "compose.yaml: valid against the Compose Specification's schema"

# The engines' own reading, with stand-ins for the secrets.
export ARENA_DB_PASSWORD=check ARENA_WORKER_1_TOKEN=check ARENA_WORKER_2_TOKEN=check
if docker compose version >/dev/null 2>&1; then
    docker compose -f compose.yaml config --quiet
    say "compose.yaml: docker compose config read it"
elif command -v podman-compose >/dev/null 2>&1; then
    # podman-compose 1.0 (Debian 12) has no `config`; and its --dry-run
    # still makes the volumes and network, so it is not used here.
    if podman-compose -h 2>/dev/null | grep -qw config; then
        podman-compose -f compose.yaml config >/dev/null
        say "compose.yaml: podman-compose config read it"
    else
        say "this podman-compose has no config command: the schema check only"
    fi
else
    say "neither docker compose nor podman-compose here: the schema check only"
fi
