"""Regenerate grammars/gradcli.tables.json, the parse tables gradcli's parser driver runs on
(gradcli.language.grammar.parse_into), from Lark's parser for grammars/gradcli.lark.

Run it after changing the grammar (or the parser's options, or the file's layout):

    python scripts/gen_parse_tables.py          # write the file
    python scripts/gen_parse_tables.py --check  # exit 1 if the file is not what the grammar gives

Until it is rerun, gradcli still parses correctly (a stale file is ignored: its fingerprint holds the grammar's
text, the file's layout and the parser's options), only start-up pays again for building Lark's parser;
tests/language/test_parse_driver.py fails on a stale file. Which Lark generates the file does not matter, and
it is not in the fingerprint: the tables are the grammar's (Lark 1.1.9, 1.2.2 and 1.3.1 write the same file),
and gradcli uses them whichever Lark is installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradcli.language import grammar  # noqa: E402


def render(tables: dict) -> str:
    """The tables as JSON text, one parser state or lexer a line (a grammar change gives a readable diff)."""
    def dump(value):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    lines = ["{"]
    keys = list(tables)
    for i, key in enumerate(keys):
        value = tables[key]
        end = "," if i < len(keys) - 1 else ""
        if isinstance(value, list) and key in ("rules", "states", "terminals", "lexers"):
            lines.append(f"{dump(key)}:[")
            lines += [dump(item) + ("," if j < len(value) - 1 else "") for j, item in enumerate(value)]
            lines.append("]" + end)
        else:
            lines.append(f"{dump(key)}:{dump(value)}{end}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render(grammar.tables_from_lark())
    path = grammar.tables_path()
    if "--check" in argv:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            print(f"{path} is not up to date: run python scripts/gen_parse_tables.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
