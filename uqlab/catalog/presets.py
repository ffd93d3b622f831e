"""The example sentences of a task: what the explorer offers first, Compare and Table 3 show at
their defaults, and :mod:`uqlab.evaluation.stored` keeps at the explorer's default T.

The paper's Table 3 sentences where the paper has them (CoLA); else the three shortest texts
(40 characters or more) of each label in each bundled evaluation subset (IMDB: its test sample
and CR), offline, from assets/.
"""

from __future__ import annotations

from functools import lru_cache

from uqlab.catalog.tasks import TASKS
from uqlab.data import task_examples
from uqlab.evaluation.paper import examples

PER_LABEL = 3  # shortest texts per label and subset (tasks without the paper's sentences)
MIN_CHARS = 40  # a shorter text tells too little to be an example


@lru_cache(maxsize=4)
def preset_rows(task: str) -> tuple[tuple[str, int, str], ...]:
    """``(text, gold label, domain key)`` of ``task``'s example sentences, in display order;
    none for an unknown task."""
    spec = TASKS.get(task)
    if spec is None:
        return ()
    paper = examples(task)
    if paper:
        return tuple((r.text, int(r.gold), r.domain) for r in paper)
    out = []
    for domain, (_, split) in task_examples(task).items():
        order = sorted(range(len(split.texts)), key=lambda i: (len(split.texts[i]), i))
        picked = dict.fromkeys(range(len(spec.label_names)), 0)
        for i in order:
            label = int(split.labels[i])
            if picked[label] < PER_LABEL and len(split.texts[i]) >= MIN_CHARS:
                out.append((split.texts[i], label, domain))
                picked[label] += 1
    return tuple(out)
