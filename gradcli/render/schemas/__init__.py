"""The JSON Schemas (draft 2020-12) of gradcli's JSON outputs, shipped in the package and printed by
``gradcli schema NAME``:

* ``grad``: the document of ``gradcli grad --json``;
* ``batch``: one line of ``gradcli batch --json`` (it refers to ``grad`` for the fields of a result);
* ``ops``: the list of ``gradcli ops --json``;
* ``explain``: the document of ``gradcli grad --explain --json``;
* ``plot``: the document of ``gradcli plot --format json``;
* ``jacobian``, ``hessian``, ``jvp``, ``hvp``: the documents of ``gradcli jacobian``/``hessian``/``jvp``/``hvp
  --format json``.

Each file's ``$id`` is ``urn:gradcli:schema:NAME``. :func:`schema` returns a self-contained document: the
schemas it refers to are embedded under ``$defs`` (JSON Schema's bundling of a compound document).
"""

from __future__ import annotations

#: Each schema's name → the JSON output it describes. ``gradcli schema``'s list and its ``--help`` are read from
#: here (the module imports nothing at the top: ``gradcli --help`` reads it without the JSON encoder).
DESCRIPTIONS = {
    "grad": "gradcli grad --json",
    "batch": "one line of gradcli batch --json",
    "ops": "gradcli ops --json",
    "explain": "gradcli grad --explain --json",
    "plot": "gradcli plot --format json",
    "jacobian": "gradcli jacobian --json",
    "hessian": "gradcli hessian --json",
    "jvp": "gradcli jvp --json",
    "hvp": "gradcli hvp --json",
}
NAMES = tuple(DESCRIPTIONS)
_PREFIX = "urn:gradcli:schema:"


def _load(name: str) -> dict:
    import json
    from importlib import resources

    return json.loads(resources.files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))


def schema(name: str) -> dict:
    """The schema ``name`` (one of :data:`NAMES`) as a dict, with the schemas it refers to embedded.

    Raises:
        KeyError: for an unknown name.
    """
    if name not in NAMES:
        raise KeyError(name)
    import json

    doc = _load(name)
    text = json.dumps(doc)
    for other in NAMES:
        if other != name and f'"{_PREFIX}{other}' in text:
            doc.setdefault("$defs", {})[f"{other}_schema"] = _load(other)
    return doc


def schema_text(name: str) -> str:
    """The schema ``name`` as indented JSON text, ending with a newline."""
    import json

    return json.dumps(schema(name), indent=2, ensure_ascii=False) + "\n"
