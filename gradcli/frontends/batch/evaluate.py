"""``gradcli.frontends.batch.evaluate``: the batch's evaluation as a library function, for those who drive Dask, Ray or
Spark themselves::

    import dask.bag as db
    from gradcli.frontends.batch import evaluate

    def evaluate_partition(entries):
        return list(evaluate(entries))  # results go back from worker processes: a list, not a generator

    results = db.from_sequence(entries, npartitions=8).map_partitions(evaluate_partition).compute()

(in a script, under ``if __name__ == "__main__":``: dask.bag's default scheduler starts processes that import
it). ``gradcli batch --dask ADDRESS`` does this for a file or standard input, in input order
(:mod:`gradcli.frontends.batch.dask_runner`). Each entry is what a line of ``gradcli batch`` holds: a JSON Lines object (a dict with ``program`` and
optionally ``inputs``, ``consts``, ``gradient``, ``repeat``, ``zero_grad``, ``seed``, ``dtype``, ``check``,
``id``) or a text entry (a str: a program that declares its own inputs). Each result is the dict of one
``gradcli batch --json`` line (schema ``gradcli schema batch``), with ``line`` numbering the entries from 1 in the
order given. A bad entry gives a result with ``error``, never an exception.
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator

from ...engine.errors import InputError
from ...render.json import batch_entry_to_dict, error_to_dict
from ...app.result import EntryResult
from .entries import Defaults, Entry, Line, jsonl_entry, text_entries
from .runner import run_entry


class _Dicts:
    """An EntryFormat whose "text" is the result dict itself (this module never renders)."""

    def entry(self, item: EntryResult) -> dict:
        return batch_entry_to_dict(item.line, item.result, None if item.error is None else error_to_dict(item.error),
                                   item.id, item.has_id)


def evaluate(entries: Iterable, *, dtype: str = "float32", seed: int | None = None) -> Iterator[dict]:
    """Evaluate ``entries`` (dicts of JSON Lines fields, or str programs) one after another in this process and
    yield one result dict per entry, in order (see the module docstring).

    Args:
        dtype, seed: the defaults of every entry (an entry's own ``dtype``/``seed`` wins), as ``--dtype``/``--seed``.
    Returns:
        a generator: results are computed as they are asked for (a Dask partition can be any iterable).
    """
    defaults = Defaults(dtype=dtype, seed=seed, filename="<entries>")
    fmt = _Dicts()
    for number, item in enumerate(entries, start=1):
        entry = _entry(number, item, defaults)
        yield run_entry(entry, fmt).text


def _entry(number: int, item, defaults: Defaults) -> Entry:
    if isinstance(item, dict):
        try:
            text = json.dumps(item, allow_nan=False)
        except (TypeError, ValueError) as e:
            err = InputError(f"the entry is not JSON data: {e}", type="InputError")
            return Entry(number, "", 0, error=err)
        return jsonl_entry(Line(number, text, 0), defaults)
    if isinstance(item, str):
        lines = [Line(number, t, 0) for t in item.split("\n")]
        found = list(text_entries(lines, defaults))
        if len(found) == 1:
            return Entry(number, found[0].text, 0, request=found[0].request, error=found[0].error,
                         check=found[0].check)
        return Entry(number, item, 0, error=InputError("a str entry must hold one program (join several lines of "
                                                       "one entry with newlines inside a block, or use ';')",
                                                       type="InputError"))
    return Entry(number, "", 0, error=InputError(f"an entry is a dict of JSON Lines fields or a str program, got "
                                                 f"{type(item).__name__}", type="InputError"))


__all__ = ["evaluate"]
