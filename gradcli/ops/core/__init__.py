"""The machinery of the op table: declaring an op with its derivatives, applying it (reverse and
forward mode), and the derivative formulas that ``--explain`` shows.
"""
