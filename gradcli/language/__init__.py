"""The gradcli language: grammar loading, tree → program, the interpreter, and input specs.

Data flows one way: text --parse--> Lark tree --build--> program (:mod:`.nodes`) --run--> values.

* :mod:`.grammar` loads ``grammars/gradcli.lark`` and parses; :mod:`.build` turns the tree into :mod:`.nodes`.
* :mod:`.interpreter` evaluates a program (its statements in :mod:`.statements`, expressions in
  :mod:`.expressions`, calls and classes in :mod:`.calls`, generator functions in :mod:`.generators`); what it can reach is in :mod:`.builtins` (builtin names),
  :mod:`.namespaces` (the ``torch`` namespaces), :mod:`.attributes` (attribute allow-lists), :mod:`.strings`
  (str, repr, print, string methods) and :mod:`.values` (namespaces, user functions), and :mod:`.safety` keeps
  Python's values within the limits. The operators come from :mod:`gradcli.ops.operators`.
* :mod:`.specs` reads ``-i``/``-c`` input specs, data files and programs.
"""
