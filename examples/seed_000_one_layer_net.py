# gradcli run --notebook --keep-going --seed 0 examples/seed_000_one_layer_net.py
#
# The code cells of the PyTorch tutorial examples/seeds/000_*.txt as the notebook has them, each after its
# "# In[n]:" line: a one-layer net with binary_cross_entropy_with_logits; grad_fn; no_grad;
# detach; Jacobian products on eye(5) and the accumulation of .grad over repeated backward calls.
# --notebook shows the last value of each cell as Jupyter does. Cells that print random numbers or
# memory addresses show other values than the notebook; every other output is the notebook's.


# In[1]:
%matplotlib inline
import torch

x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)


# In[2]:
print('Gradient function for z =',z.grad_fn)
print('Gradient function for loss =', loss.grad_fn)


# In[3]:
loss.backward()
print(w.grad)
print(b.grad)


# In[4]:
z = torch.matmul(x, w)+b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)


# In[5]:
z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)


# In[6]:
inp = torch.eye(5, requires_grad=True)
out = (inp+1).pow(2)
out.backward(torch.ones_like(inp), retain_graph=True)
print("First call\n", inp.grad)
out.backward(torch.ones_like(inp), retain_graph=True)
print("\nSecond call\n", inp.grad)
inp.grad.zero_()
out.backward(torch.ones_like(inp), retain_graph=True)
print("\nCall after zeroing gradients\n", inp.grad)
