"""The autograd graph laid out by Graphviz (the ``svg``, ``png`` and ``pdf`` formats of ``--graph``): the ``dot``
format's text (:mod:`gradcli.render.dot`) run through Graphviz's ``dot`` program by the ``graphviz`` Python
package, imported only here, when a picture is asked for. What is missing is said plainly, with how to
install it (exit 2): Graphviz's ``dot`` program (a system package, not a Python one) or the ``graphviz``
package.
"""

from __future__ import annotations

from ..engine.errors import InputError

DOT_MISSING = ("the {fmt} format needs Graphviz's 'dot' program, which was not found on PATH. Install Graphviz "
               "(Debian/Ubuntu: sudo apt-get install graphviz; Fedora: sudo dnf install graphviz; macOS: brew "
               "install graphviz; Windows: winget install graphviz), or write DOT text with --graph dot and "
               "draw it elsewhere")


def graphviz_module():
    """The ``graphviz`` Python package.

    Raises:
        InputError: it is not installed (exit 2), saying how to install it.
    """
    try:
        import graphviz
    except ImportError:
        raise InputError("drawing the graph needs the Python package 'graphviz' (pip install graphviz), "
                         "a dependency of gradcli that is missing here", type="DependencyError") from None
    return graphviz


def render_dot(dot_text: str, fmt: str) -> bytes:
    """Lay out DOT text with Graphviz's ``dot`` into ``fmt`` ("svg", "png", "pdf").

    Raises:
        InputError: the ``graphviz`` package or the ``dot`` program is missing, or dot fails (exit 2).
    """
    graphviz = graphviz_module()
    try:
        return graphviz.Source(dot_text).pipe(format=fmt, engine="dot", quiet=True)
    except graphviz.ExecutableNotFound:
        raise InputError(DOT_MISSING.format(fmt=fmt), type="DependencyError") from None
    except graphviz.CalledProcessError as e:
        detail = (e.stderr or b"").decode("utf-8", "replace").strip()
        raise InputError(f"Graphviz's dot failed to draw the graph: {detail or e}", type="GraphvizError") from None
