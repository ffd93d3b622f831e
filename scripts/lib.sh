# Sourced by retrain.sh and sweep.sh from the repository root: what both do to one checkpoint.

# the shipped bits were made with 2 CPU threads; another count sums floats in another order
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

# train_and_evaluate LABEL DIR TRAIN_ARGS...: train (resuming an interrupted run) with the given
# arguments, which must write DIR; evaluate DIR (T=10, the paper's protocol) into its
# metrics.json; then drop its resumable state (20+ MB, gitignored) so the folder stays shippable.
train_and_evaluate() {
  local label=$1 dir=$2
  shift 2
  echo "== $label: training ($(date -u +%H:%M:%S))"
  python -m uqlab.train "$@" --quiet
  echo "== $label: evaluating ($(date -u +%H:%M:%S))"
  python -m uqlab.evaluate --ckpt "$dir" --quiet
  rm -rf "$dir/.train"
}
