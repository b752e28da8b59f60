"""The machinery of the op table: declaring an op with its derivatives (:mod:`.declare`), applying it in reverse
mode (:mod:`.apply`) and in forward mode (:mod:`.forward`), and the derivative formulas that ``--explain`` shows.
"""

# forward mode installs itself on apply (which is below it), so that any use of the op table has it
from . import forward  # noqa: F401
