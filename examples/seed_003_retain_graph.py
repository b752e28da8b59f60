# gradcli run --notebook --keep-going --seed 0 examples/seed_003_retain_graph.py
#
# The code cells of the PyTorch tutorial examples/seeds/003_*.txt as the notebook has them, each after its
# "# In[n]:" line: the one-layer net again; retain_graph=True and accumulation;
# no_grad; detach.
# --notebook shows the last value of each cell as Jupyter does. Cells that print random numbers or
# memory addresses show other values than the notebook; every other output is the notebook's.


# In[72]:
import torch


# In[73]:
x = torch.ones(5) # input tensor
y = torch.zeros(3)  # expected output

w = torch.randn(5, 3, requires_grad = True)
b = torch.randn(3, requires_grad = True)
z = torch.matmul(x, w) + b # y_hat

loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)


# In[74]:
print('Gradient function for z = ', z.grad_fn)
print('Gradient function for loss = ', loss.grad_fn)


# In[75]:
loss.backward()
print(w.grad)
print(b.grad)


# In[76]:
x = torch.ones(5)
y = torch.zeros(3) 

w = torch.randn(5, 3, requires_grad = True)
b = torch.randn(3, requires_grad = True)
z = torch.matmul(x, w) + b

loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

loss.backward(retain_graph=True)
print('w gradients after backward 1: ', w.grad)

loss.backward(retain_graph=True)
print('w gradients after backward 2: ', w.grad)

w.grad.zero_()
print('w gradients after grad.zero: ', w.grad)


# In[77]:
z = torch.matmul(x, w) + b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)


# In[78]:
z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)
