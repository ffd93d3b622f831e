#!/usr/bin/env bash
# Retrain and re-evaluate shipped checkpoints from their configs, one after another:
#   bash scripts/retrain.sh imdb-hsto cola-bam ...     (names of files in configs/)
#   bash scripts/retrain.sh all
# Each checkpoint is trained into assets/checkpoints/<name>/ (resuming an interrupted run), then
# evaluated into its metrics.json (T=10, the paper's protocol), then its resumable state removed. Needs the data: set
# UQ_DATA_DIR (e.g. ../shared/data) or have the Hugging Face hub reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
# the shipped bits were made with 2 CPU threads; another count sums floats in another order
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
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
  echo "== $name: training ($(date -u +%H:%M:%S))"
  python -m uqcore.train --config "configs/$name.json" --quiet
  echo "== $name: evaluating ($(date -u +%H:%M:%S))"
  python -m uqcore.evaluate --ckpt "$name" --quiet
  # finished: drop the resumable training state (20+ MB, gitignored) so assets/ stays shippable
  rm -rf "assets/checkpoints/$name/.train"
done
echo "== done ($(date -u +%H:%M:%S))"
