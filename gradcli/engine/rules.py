"""How the engine calls a derivative rule: the codes shared by the op table (:mod:`gradcli.ops.core.declare`, which
computes them when a rule is declared) and the engine (:mod:`gradcli.engine.autograd`, which reads them on every
node it runs).

A rule names what it needs after the gradient (see :meth:`gradcli.ops.core.declare.Op.defvjp`); each name is one
argument of a kind below, and ``Op.vjp_plan`` lists them in the rule's order as ``(kind, index)`` pairs.
When the names follow one of a few fixed orders, ``Op.vjp_call`` says which, so that the engine can pass the
node's values without going through the plan (a fast path: compare with these plain module-level ints, which
cost less than an enum's attribute lookup in the engine's loop).
"""

# ----------------------------------------------------------------- argument kinds (Op.vjp_plan)
#: A tensor input of the forward (``input``, ``other``): index = its slot in the node's saved values.
ARG_INPUT = 0
#: ``result``, the op's output: index = its slot in the node's saved values.
ARG_RESULT = 1
#: A non-tensor parameter of the forward (``dim``, ``keepdim``): index = its position among the parameters.
ARG_PARAM = 2
#: ``<input>_shape`` (``input_shape``): index = the input's position among the tensor inputs.
ARG_SHAPE = 3
#: ``needs_input_grad``: a tuple of bools, one per tensor input (index unused).
ARG_NEEDS_INPUT_GRAD = 4
#: A ``*args`` parameter (``permute(input, *dims)``): the parameters from its position on, as a tuple.
ARG_VARARGS = 5

# ------------------------------------------------------------------------ call codes (Op.vjp_call)
#: Arguments built from the plan (Node._rule_args): any order, and always under create_graph.
CALL_PLAN = 0
#: ``rule(grad, *saved)``.
CALL_SAVED = 1
#: ``rule(grad, *saved, needs_input_grad)``.
CALL_SAVED_NEEDS = 2
#: ``rule(grad, *saved, *params)``: every non-tensor parameter, in the forward's order.
CALL_SAVED_PARAMS = 3
#: ``rule(grad, *saved, *params, needs_input_grad)``.
CALL_SAVED_PARAMS_NEEDS = 4
