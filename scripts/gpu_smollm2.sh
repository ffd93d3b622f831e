#!/usr/bin/env bash
# Train, then evaluate, the SmolLM2-135M adapter checkpoints (configs/*-smollm2-*.json) on a GPU:
#   bash scripts/gpu_smollm2.sh train WORK LOG      # base installed in WORK/bases, checkpoints
#   bash scripts/gpu_smollm2.sh evaluate WORK LOG   # in WORK/ck/<name>; LOG: a folder for logs
# Needs the data (UQ_DATA_DIR) and either the base already in WORK/bases or GGUF=path/to/the
# GGUF file (python -m uqlab.bases install smollm2 --gguf, sha256 checked). Training uses TF32
# (the configs say so); evaluation computes in float32, so the Table 3 rows recomputed on a CPU
# match. The shipped checkpoints are copies of WORK/ck/<name> without .train/.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=$1 work=$2 log=$3
py=${PYTHON:-python3}
export UQ_BASES_DIR=$work/bases PYTHONUNBUFFERED=1
mkdir -p "$work/ck" "$log"
names=()  # the *-smollm2-* configs (the IMDB pair's say "limit": 1000, its CPU run: drop it here)
for f in configs/*-smollm2-*.json; do names+=("$(basename "$f" .json)"); done
case $stage in
  train)
    if [[ -n ${GGUF:-} ]]; then $py -m uqlab.bases install smollm2 --gguf "$GGUF"; fi
    for name in "${names[@]}"; do
      echo "== train $name ($(date -u +%H:%M:%S))"
      $py -m uqlab.train --config "configs/$name.json" --out "$work/ck/$name" --device cuda \
        --quiet 2>&1 | tee -a "$log/train.log"
    done ;;
  evaluate)
    for name in "${names[@]}"; do
      echo "== evaluate $name ($(date -u +%H:%M:%S))"
      $py -m uqlab.evaluate --ckpt "$work/ck/$name" --device cuda --quiet 2>&1 \
        | tee -a "$log/evaluate.log"
    done ;;
  *) echo "usage: bash scripts/gpu_smollm2.sh train|evaluate WORK LOG" >&2; exit 2 ;;
esac
echo "== done ($(date -u +%H:%M:%S))"
