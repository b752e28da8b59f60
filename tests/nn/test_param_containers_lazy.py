"""nn.ParameterList, nn.ParameterDict, the lazy modules and Embedding.from_pretrained in programs as PyTorch users
write them: each program is run by Python with torch and by ``gradcli run``, and the outputs must agree (numbers to
rtol 1e-4)."""

from __future__ import annotations

from helpers import assert_printed_alike, python_and_gradcli_stdout

CONTAINERS = """
import torch
from torch import nn
from collections import OrderedDict
torch.manual_seed(0)
pl = nn.ParameterList([nn.Parameter(torch.randn(2)), nn.Parameter(torch.randn(2, 3))])
print(pl)
pl.append(nn.Parameter(torch.zeros(1, dtype=torch.float64)))
pl.append(torch.ones(2))
pl.extend([torch.zeros(())])
print(pl)
print(len(pl), pl[0], pl[-2], pl[3].requires_grad, isinstance(pl[3], nn.Parameter))
print(pl[1:3])
pd = nn.ParameterDict({"b": nn.Parameter(torch.randn(1)), "a": torch.zeros(2)})
print(pd)
print(list(pd.keys()), pd["a"], "a" in pd, len(pd))
print(nn.ParameterDict(OrderedDict([("z", torch.ones(1)), ("y", torch.ones(3, dtype=torch.float64))])))
print(nn.ParameterList(), nn.ParameterDict())
print(nn.ParameterList([1, "x", nn.Parameter(torch.randn(1), requires_grad=False)]))
print(pd.pop("b"), pd)
pd.update([("c", nn.Parameter(torch.ones(1))), ("d", torch.zeros(2, 2))])
print(pd)
for k, v in pd.items():
    print(k, v.shape)
print(nn.ParameterList, type(pd))
"""

TRAINING = """
import torch
from torch import nn
torch.manual_seed(3)
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = nn.ParameterList([nn.Parameter(torch.randn(3, 3) * 0.5) for _ in range(2)])
        self.extra = nn.ParameterDict({"scale": nn.Parameter(torch.ones(1)), "shift": torch.zeros(3)})
    def forward(self, x):
        for w in self.ws:
            x = torch.tanh(x @ w)
        return x * self.extra["scale"] + self.extra["shift"]
model = Model()
print(model)
print([(n, tuple(p.shape)) for n, p in model.named_parameters()])
print(list(model.state_dict().keys()))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 3)
y = torch.randn(4, 3)
for step in range(2):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    print(step, loss, model.ws[0].grad, model.extra["shift"].grad)
    opt.step()
print(model.ws[1], model.extra["scale"])
"""


def test_parameter_list_and_dict_print_and_index_as_pytorch(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "containers", CONTAINERS)
    assert_printed_alike(got, want)


def test_a_model_holding_parameter_containers_trains_as_pytorch(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "training", TRAINING)
    assert_printed_alike(got, want)

LAZY = """
import torch
from torch import nn
torch.manual_seed(0)
l = nn.LazyLinear(2)
print(l, l.weight, type(l), l.has_uninitialized_params())
print(list(l.named_parameters()), l.state_dict())
x = torch.randn(4, 3, requires_grad=True)
y = l(x)
print(l, type(l), y, isinstance(l, nn.Linear))
y.pow(2).sum().backward()
print(l.weight.grad, l.bias.grad, x.grad)
print(l.weight, l.bias)
c = nn.LazyConv2d(4, 3, padding=1)
print(c)
out = c(torch.randn(2, 3, 5, 5))
print(c, out.shape, c.weight.shape, c.bias)
c1 = nn.LazyConv1d(2, 2, bias=False)
print(c1, c1(torch.randn(3, 4)).sum(), c1)
bn = nn.LazyBatchNorm1d()
print(bn, list(bn.named_buffers()))
print(bn(torch.randn(4, 3)), bn, bn.running_mean, bn.running_var, bn.num_batches_tracked)
bn2 = nn.LazyBatchNorm2d(affine=False)
print(bn2, bn2(torch.randn(2, 2, 2, 2)).shape, bn2, list(bn2.state_dict()))
c3 = nn.LazyConv3d(2, (1, 2, 2), groups=2, stride=2)
print(c3, c3(torch.randn(1, 4, 2, 4, 4)).sum(), c3, c3.weight.shape)
bn3 = nn.LazyBatchNorm3d(momentum=None)
print(bn3(torch.randn(2, 3, 1, 2, 2)).pow(2).sum(), bn3, bn3.running_var, type(bn3))
m = nn.Sequential(nn.LazyLinear(5), nn.ReLU(), nn.LazyLinear(1))
print(m)
print(m(torch.randn(2, 4)), m)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for step in range(2):
    opt.zero_grad()
    loss = m(torch.ones(3, 4)).pow(2).mean()
    loss.backward()
    opt.step()
    print(step, loss, m[2].weight)
"""


def test_lazy_modules_initialise_on_the_first_call_as_pytorch(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "lazy", LAZY)
    assert_printed_alike(got, want)

FROM_PRETRAINED = """
import torch
from torch import nn
w = torch.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3], [0.5, -1.0, 2.0]])
e = nn.Embedding.from_pretrained(w)
print(e, e.weight, e(torch.tensor([1, 0, 2])), e.weight.requires_grad)
e2 = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=0)
out = e2(torch.tensor([[0, 1], [2, 1]]))
(out * torch.arange(6.).reshape(2, 1, 3)).sum().backward()
print(e2, out, e2.weight.grad, e2.weight.requires_grad)
try:
    nn.Embedding.from_pretrained(torch.ones(3))
except AssertionError as err:
    print("AssertionError", err)
"""


def test_embedding_from_pretrained_as_pytorch(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "from_pretrained", FROM_PRETRAINED)
    assert_printed_alike(got, want)

EDGES = """
import torch
from torch import nn
torch.manual_seed(1)
pl = nn.ParameterList([torch.ones(2)])
pl[0] = torch.zeros(3)
pl.extend([torch.ones(1)])
same = pl
pl += [torch.ones(2, 2)]
print(pl, len(pl), same is pl)
ml = nn.ModuleList([nn.ReLU()])
ml += [nn.Tanh()]
print(ml)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.params = nn.ParameterList()
        for i in range(3):
            self.params.append(nn.Parameter(torch.randn(2) * i))
    def forward(self, x):
        for p in self.params:
            x = x * p
        return x.sum()
n = Net()
print(n, sum(p.numel() for p in n.parameters()))
n(torch.ones(2)).backward()
print([p.grad for p in n.params])
try:
    pl(1)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    pl[5]
except IndexError as e:
    print("IndexError", e)
pd = nn.ParameterDict()
pd["w"] = torch.ones(2)
print(pd.get("w"), pd.get("q"), pd.setdefault("q", torch.zeros(1)), list(pd))
try:
    pd["nope"]
except (KeyError, AttributeError) as e:
    print(type(e).__name__, e)
l = nn.LazyLinear(3)
l.zero_grad()
print(l.training, l.eval(), l.has_uninitialized_params())
l = l.double()
print(l(torch.ones(2, 2, dtype=torch.float64)).dtype)
"""


def test_container_item_assignment_errors_and_lazy_casts_as_pytorch(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "edges", EDGES)
    assert_printed_alike(got, want)
