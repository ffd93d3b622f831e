"""Train one model (or one ensemble member) with early stopping on the dev metric.

Loss per global batch: ``sum CE / batch`` (+ for BAM, ``w_t * kl_coef * mean KL per real
attention entry``, with ``w_t`` rising linearly from 0 to 1 over ``kl_anneal_steps``). Each
example's dropout and attention noise are keyed by ``(seed, epoch, position in the epoch)``,
and processes split global batches, so under ``torchrun`` the gradient is the single-process
one up to floating-point summation order.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from sklearn.metrics import f1_score, matthews_corrcoef

from uqcore.inference.batch_predict import predict_ids
from uqcore.nets.layers import widest_query_rows
from uqcore.nets.noise import sample_seed
from uqcore.nets.stream_noise import StreamNoise
from uqcore.settings import resolve
from uqlab.evaluation.shards import Shards
from uqlab.training.batches import Encoded, epoch_batches, epoch_order
from uqlab.training.recipe import TrainConfig
from uqlab.training.resume import Progress, load_state, loop_clock, save_state

Dist = Shards  # this process's place in a (possibly single-process) run
ALONE = Shards()


def evaluate(model, data: Encoded, metric: str, samples: int, seed: int, device) -> float:
    """Dev metric of the mean prediction over ``samples`` draws (accuracy, MCC or macro-F1)."""
    model.eval()
    probs = predict_ids(
        model, data.ids, samples, seed, rows=256, device=device, noise="stream"
    )  # [T, N, C]
    predicted = probs.mean(0).argmax(-1).numpy()  # [N]
    return metric_of(predicted, data.labels.numpy(), metric, probs.shape[-1])


def metric_of(predicted, labels, metric: str, classes: int) -> float:
    """A task's metric (``"accuracy"``, ``"mcc"`` or ``"macro_f1"`` over ``classes``) of class
    predictions ``predicted [N]`` against ``labels [N]`` (integer arrays)."""
    if metric == "mcc":
        return float(matthews_corrcoef(labels, predicted))
    if metric == "macro_f1":
        return float(
            f1_score(
                labels, predicted, labels=list(range(classes)), average="macro", zero_division=0
            )
        )
    return float((predicted == labels).mean())


def train_model(
    model: torch.nn.Module,
    train: Encoded,
    dev: Encoded,
    tc: TrainConfig,
    metric: str,
    seed: int,
    state_dir: Path,
    dist_ctx: Dist = ALONE,
    progress_bar: Callable | None = None,
) -> tuple[dict[str, torch.Tensor], Progress]:
    """Train ``model`` in place; return the best state dict (by dev metric) and the progress.
    Resumes from ``state_dir`` when it holds a state of the same configuration;
    ``progress.seconds`` then counts the loop's time in the earlier processes too."""
    device = next(model.parameters()).device
    cfg = model.cfg
    trainable = [p for p in model.parameters() if p.requires_grad]  # a base's stay frozen
    optimizer = torch.optim.Adam(trainable, lr=tc.lr, weight_decay=tc.weight_decay)
    fingerprint = state_fingerprint(tc, seed, dist_ctx.world)
    resumed = load_state(state_dir, model, optimizer, fingerprint)
    progress, best = resumed if resumed else (Progress(), None)
    runner = model
    if dist_ctx.world > 1:
        runner = torch.nn.parallel.DistributedDataParallel(model)
    settings = resolve(cfg, training=True)
    saved_at = time.monotonic()  # an early kill still leaves a state after save_seconds
    clock = loop_clock(progress)
    while progress.epoch < tc.epochs and not progress.done:
        order = epoch_order(len(train), seed, progress.epoch)
        batches = epoch_batches(train, order, tc.batch_size, dist_ctx.rank, dist_ctx.world)
        epoch_seed = sample_seed(seed, progress.epoch)
        bar = progress_bar(total=len(batches), initial=progress.step) if progress_bar else None
        model.train()
        for batch in batches[progress.step :]:
            optimizer.zero_grad(set_to_none=True)
            kl_weight = tc.kl_coef * min(1.0, (progress.global_step + 1) / tc.kl_anneal_steps)
            loss = _accumulate(runner, tc, batch, settings, epoch_seed, kl_weight, dist_ctx)
            if tc.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), tc.grad_clip)
            optimizer.step()
            progress.step += 1
            progress.global_step += 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss / len(batch.positions):.4f}", dev=progress.best_metric)
            if dist_ctx.main and _save_due(tc, progress.global_step, saved_at):
                clock()
                save_state(state_dir, model, best, optimizer, progress, fingerprint)
                saved_at = time.monotonic()
        if bar is not None:
            bar.close()
        score = _shared(
            evaluate(model, dev, metric, tc.dev_samples, seed, device) if dist_ctx.main else 0.0,
            device,
            dist_ctx,
        )
        progress.history.append({"epoch": progress.epoch, metric: score})
        if progress.best_metric is None or score > progress.best_metric:
            progress.best_metric, progress.best_epoch, progress.bad_epochs = (
                score,
                progress.epoch,
                0,
            )
            best = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        else:
            progress.bad_epochs += 1
        progress.epoch += 1
        progress.step = 0
        progress.done = progress.bad_epochs >= tc.patience
        clock()
        if dist_ctx.main:
            save_state(state_dir, model, best, optimizer, progress, fingerprint)
    if best is None:  # zero epochs asked: keep the initial weights
        best = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    clock()
    return best, progress


MICRO_BATCH_BYTES = 8 << 20  # one [rows, H, Lq, L] attention tensor should stay in the L3 cache


def micro_batch_size(cfg, length: int, device=None, rows: int | None = None) -> int:
    """Examples per forward/backward pass so the attention tensors stay cache-resident: on a
    bandwidth-poor CPU this makes a 256-token IMDB step 2.2x faster than one 128-row pass.
    A 1-layer model attends from [CLS] only (training never runs EM), so its largest per-example
    tensors are the ``[L, 3D]`` projections instead. On a GPU the whole batch (``rows``) is one
    pass: there, 2-row passes of MiniLM at 256 tokens made a step 16 launches long and
    ran at 1.5 steps/s on an H100."""
    if device is not None and torch.device(device).type != "cpu" and rows:
        return rows
    rows = widest_query_rows(cfg, length, False, resolve(cfg, training=True))  # no EM in training
    per_example = 4 * max(cfg.n_heads * rows * length, 3 * cfg.d_model * length)
    return max(1, MICRO_BATCH_BYTES // per_example)


def _loss(
    runner, cfg, batch, lo: int, step: int, settings, epoch_seed: int, kl_weight: float, device
):
    """Summed loss of rows ``lo : lo + step`` of a batch (CE, plus BAM's weighted mean KL)."""
    ids, mask = batch.ids[lo : lo + step].to(device), batch.mask[lo : lo + step].to(device)
    noise = StreamNoise.for_indices(epoch_seed, batch.positions[lo : lo + step], device=device)
    out = runner(ids, mask, settings, noise)
    loss = F.cross_entropy(
        out.logits.float(), batch.labels[lo : lo + step].to(device), reduction="sum"
    )
    if out.kl is not None:
        real = mask.sum(1).float()  # [n] real tokens
        # attention entries the KL covers: all rows of the earlier layers, [CLS] in the last
        entries = cfg.n_heads * ((cfg.n_layers - 1) * real * real + real)
        loss = loss + kl_weight * (out.kl / entries).sum()  # mean KL per attention entry
    return loss


def _accumulate(runner, tc, batch, settings, epoch_seed: int, kl_weight: float, dist_ctx) -> float:
    """Backward passes over a batch's micro-batches (gradient accumulation); returns the summed
    loss. Under DDP the gradients are all-reduced once, on the last micro-batch."""
    model = getattr(runner, "module", runner)
    cfg, device = model.cfg, next(model.parameters()).device
    step = micro_batch_size(cfg, batch.ids.shape[1], device, len(batch.positions))
    loss = 0.0
    for lo in range(0, len(batch.positions), step):
        last = lo + step >= len(batch.positions)
        sync = contextlib.nullcontext() if last or dist_ctx.world == 1 else runner.no_sync()
        with sync:
            with _autocast(tc, device):
                part = _loss(runner, cfg, batch, lo, step, settings, epoch_seed, kl_weight, device)
            (part * dist_ctx.world / batch.global_size).backward()  # DDP averages
        loss += part.item()
    return loss


def slow_autocast(tc, device) -> str | None:
    """A warning when ``tc.autocast`` asks for bfloat16 on a CPU without native bfloat16
    (AVX512-BF16 or AMX): there PyTorch emulates it and a step runs ~20x slower (measured on an
    AVX2 EPYC: the first cola-smollm2-hsto step 73.6 s under autocast, 3.1-3.5 s in float32),
    or None."""
    if tc.autocast != "bfloat16" or torch.device(device).type != "cpu":
        return None
    if torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported():
        return None
    return (
        f"warning: this CPU ({torch.backends.cpu.get_cpu_capability()}) has no native bfloat16, "
        "so the config's autocast makes every training step ~20x slower than float32; "
        "train with --set autocast=null (the recipe is otherwise the same)."
    )


def _autocast(tc, device):
    """The context a training step's forward runs in: ``torch.autocast`` in ``tc.autocast``'s
    dtype (its backward follows the same casts), or nothing."""
    if tc.autocast is None:
        return contextlib.nullcontext()
    return torch.autocast(torch.device(device).type, dtype=getattr(torch, tc.autocast))


def _shared(value: float, device, dist_ctx: Dist) -> float:
    """Rank 0's value on every process."""
    if dist_ctx.world == 1:
        return value
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.broadcast(t, src=0)
    return float(t.item())


# settings that do not change the result: they may differ when a run resumes
RESUME_FREE = ("epochs", "data_dir", "device", "save_every", "save_seconds", "save_dtype", "out")
# settings added after runs were saved: unset, they are left out, so that a state written
# before they existed still resumes
LATER_SETTINGS = ("init_from",)


def state_fingerprint(tc: TrainConfig, seed: int, world: int) -> dict:
    """What a resumable state must have been written with to be resumed by this run."""
    fingerprint = {**tc.to_dict(), "member_seed": seed, "world": world}
    for key in RESUME_FREE:
        fingerprint.pop(key)
    for key in LATER_SETTINGS:
        if fingerprint[key] is None:
            fingerprint.pop(key)
    return fingerprint


def _save_due(tc, global_step: int, saved_at: float) -> bool:
    """Whether to write the resumable state after this step: every ``save_every`` steps, or
    when ``save_seconds`` have passed since the last save (a slow run killed early can resume)."""
    if tc.save_every and global_step % tc.save_every == 0:
        return True
    return bool(tc.save_seconds) and time.monotonic() - saved_at >= tc.save_seconds
