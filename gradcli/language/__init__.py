"""The gradcli language: grammar loading, tree → program, the interpreter, and input specs.

Data flows one way: text --parse--> Lark tree --build--> program (:mod:`.nodes`) --run--> values.
"""
