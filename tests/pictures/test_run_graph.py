"""``gradcli run --graph FORMAT``: the graph of the last backward call a program made, with that call's values
and gradients (leaves as they were then, whatever the program did to them afterwards), without changing what
the program prints."""

from __future__ import annotations

import json

import numpy as np

from pictures import gc, need_dot

TRAIN = """\
w = tensor([0.5, -1.], requires_grad=True)
b = tensor(0.1, requires_grad=True)
x = tensor([1., 2.])
for step in range(3):
    h = (x * w + b).tanh()
    loss = h.sum()
    loss.backward()
    print(step, loss.item())
    with no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad = None
    b.grad = None
"""


def program(tmp_path, text: str) -> str:
    path = tmp_path / "p.gc"
    path.write_text(text)
    return str(path)


def test_the_last_backward_with_its_values_matches_torch(tmp_path, torch):
    path = program(tmp_path, TRAIN)
    plain = gc("run", path)
    r = gc("run", path, "--graph", "json", "--graph-values")
    assert r.exit_code == 0, r.output
    printed, _, doc = r.stdout.partition("{")
    assert printed == plain.stdout  # what the program prints is unchanged
    graph = json.loads("{" + doc)
    nodes = {n["id"]: n for n in graph["nodes"]}
    w = torch.tensor([0.5, -1.], requires_grad=True)
    b = torch.tensor(0.1, requires_grad=True)
    x = torch.tensor([1., 2.])
    for _ in range(3):
        wv, bv = w.detach().clone(), b.detach().clone()
        h = (x * w + b).tanh()
        h.retain_grad()
        loss = h.sum()
        loss.backward()
        gw, gb, gh = w.grad.clone(), b.grad.clone(), h.grad.clone()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad = None
        b.grad = None
    np.testing.assert_allclose(nodes["w"]["value"], wv.numpy(), rtol=1e-6)
    np.testing.assert_allclose(nodes["w"]["grad"], gw.numpy(), rtol=1e-6)
    np.testing.assert_allclose(nodes["b"]["grad"], gb.numpy(), rtol=1e-6)
    np.testing.assert_allclose(nodes["n1"]["grad"], gh.numpy(), rtol=1e-6)
    assert nodes["n0"]["var"] == "loss" and nodes["n1"]["var"] == "h"


def test_a_retain_grad_of_the_program_still_works(tmp_path):
    path = program(tmp_path, "x = tensor([1., 2.], requires_grad=True)\nh = x * 3\nh.retain_grad()\n"
                             "(h * h).sum().backward()\nprint(h.grad)\n")
    plain = gc("run", path).stdout
    r = gc("run", path, "--graph", "tree", "--graph-values")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(plain) and plain == "tensor([ 6., 12.])\n"
    assert "h · MulBackward0" in r.stdout and "grad  [ 6., 12.]" in r.stdout


def test_no_backward_no_graph(tmp_path):
    r = gc("run", program(tmp_path, "print(1)\n"), "--graph", "dot")
    assert r.exit_code == 0 and r.stdout == "1\n"
    assert "the program made no backward call" in r.stderr


def test_the_file_gets_the_picture_and_stdout_what_the_program_prints(tmp_path):
    need_dot()
    out = tmp_path / "g.svg"
    r = gc("run", program(tmp_path, TRAIN), "-o", out)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("0 -0.41918784") and "<svg" in out.read_text()


def test_graph_options_need_graph(tmp_path):
    r = gc("run", program(tmp_path, "print(1)\n"), "--graph-values")
    assert r.exit_code == 2 and "go with --graph FORMAT" in r.stderr
