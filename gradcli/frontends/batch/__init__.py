"""``gradcli batch``: evaluate a file (or standard input) of entries, one result per entry, streamed.

Data flows one way::

    bytes ──▶ numbered lines ──▶ entries (text or JSON Lines) ──▶ compute (in this process, in
    --jobs worker processes, or on --dask workers) ──▶ one result per entry in the output format (a table
    row, a JSON line, ...: the renderer's EntryFormat), in input order, flushed when done

* :mod:`.entries`: reading the input formats, lazily, with 1-based line numbers;
* :mod:`.runner`: running entries in order, in-process or in worker processes, in bounded memory;
* :mod:`.dask_runner`: the same on a Dask cluster's workers, in partitions (``--dask``; Dask is imported only
  then);
* :mod:`.command`: the command: output, progress, summary, exit status, pipes and Ctrl-C;
* :mod:`.evaluate`: :func:`evaluate`, the same evaluation as a library function (entries in, result dicts out).

Every entry gets exactly one output, in input order, also with several worker processes; a bad entry (a
syntax error, a failing program, a malformed JSON line) is reported in its output and the batch goes on.
"""

from .command import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, run
from .entries import FORMATS, JSONL_FIELDS, Defaults, Entry, read_entries
from .runner import Outcome, ParallelRunner, run_entries, run_entry
from .evaluate import evaluate

__all__ = ["evaluate", "run", "read_entries", "run_entries", "run_entry", "ParallelRunner", "Entry", "Outcome", "Defaults",
           "FORMATS", "JSONL_FIELDS", "EXIT_INTERRUPTED", "EXIT_BROKEN_PIPE"]
