#!/usr/bin/env bash
# Runs the differential of Kubernetes' DRA allocator (k8s.io/dynamic-resource-allocation
# v0.37.2, driven as kube-scheduler 1.37 drives it) against gangpack for longer than the
# default test does (docs/DRA-DIFFERENTIAL.md).
#
#   scripts/dra-differential.sh [--scenarios N | --minutes M] [--seed S] [--all]
#
# Every divergent seed is printed with the path of its scenario YAML; replay one with
#   (cd go/upstream && go test -run TestDifferential -diff.only=SEED -v)
set -euo pipefail
cd "$(dirname "$0")/../go/upstream"
args=(-diff.scenarios=20000)
seed=1
while [ $# -gt 0 ]; do
  case "$1" in
    --scenarios) args=(-diff.scenarios="$2"); shift 2 ;;
    --minutes) args=(-diff.minutes="$2"); shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --all) args+=(-diff.all); shift ;;
    -h|--help) sed -n 2,9p "$0"; exit 0 ;;
    *) echo "dra-differential.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
exec go test -run '^TestDifferential$' -count=1 -timeout 0 -v . -diff.seed="$seed" "${args[@]}"
