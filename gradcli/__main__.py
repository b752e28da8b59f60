"""``python -m gradcli``: the same as the ``gradcli`` command."""

from .frontends.cli import main

# Guarded: ``gradcli batch --jobs N`` starts worker processes with the "spawn" method, which imports the main
# module again (as ``__mp_main__``) in each worker.
if __name__ == "__main__":
    main()
