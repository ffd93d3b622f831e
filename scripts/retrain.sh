#!/usr/bin/env bash
# Retrain and re-evaluate shipped checkpoints from their configs, one after another:
#   bash scripts/retrain.sh imdb-hsto cola-bam ...     (names of files in configs/)
#   bash scripts/retrain.sh all
# Each checkpoint is trained into assets/checkpoints/<name>/ and evaluated (scripts/lib.sh says
# how). Needs the data: set UQ_DATA_DIR (e.g. ../shared/data) or have the Hugging Face hub reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  echo "usage: bash scripts/retrain.sh NAME... | all   (NAME = a file in configs/ without .json)" >&2
  exit 2
fi
if [[ ${names[0]} == all ]]; then
  names=()
  for f in configs/*.json; do names+=("$(basename "$f" .json)"); done
fi
for name in "${names[@]}"; do
  [[ -f configs/$name.json ]] || { echo "no configs/$name.json" >&2; exit 2; }
done
for name in "${names[@]}"; do
  train_and_evaluate "$name" "assets/checkpoints/$name" --config "configs/$name.json"
done
echo "== done ($(date -u +%H:%M:%S))"
