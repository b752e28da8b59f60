"""The front ends: the ``gradcli`` command, ``gradcli batch`` and the interactive session. They
read input, call :mod:`gradcli.app`, and hand the Result to a renderer.
"""
