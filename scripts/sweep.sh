#!/usr/bin/env bash
# Train and evaluate one config with one setting varied, then print what each value gives on dev
# (what selection may look at) and on test and OOD (what it must not):
#   bash scripts/sweep.sh cola-bam model.attention.weibull_k 10 5 3 2
# Runs go to runs/sweep/<config>/<key>=<value>/ (gitignored) and resume if interrupted; a finished
# run is not trained again. Needs the data, as scripts/retrain.sh does (UQ_DATA_DIR or the hub).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
if [[ $# -lt 3 ]]; then
  echo "usage: bash scripts/sweep.sh CONFIG KEY VALUE...   (CONFIG = a file in configs/ without .json)" >&2
  exit 2
fi
name=$1 key=$2
shift 2
[[ -f configs/$name.json ]] || { echo "no configs/$name.json" >&2; exit 2; }
dirs=()
for value in "$@"; do
  out="runs/sweep/$name/$key=$value"
  dirs+=("$out")
  if [[ -f $out/metrics.json ]]; then
    echo "== $key=$value: done before ($out)"
    continue
  fi
  train_and_evaluate "$key=$value" "$out" --config "configs/$name.json" --set "$key=$value" --out "$out"
done
python -m uqlab.sweep_table "$key" "${dirs[@]}"
