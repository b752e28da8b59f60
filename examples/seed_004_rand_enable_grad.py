# gradcli run --notebook --keep-going --seed 0 examples/seed_004_rand_enable_grad.py
#
# The code cells of the PyTorch tutorial examples/seeds/004_*.txt as the notebook has them, each after its
# "# In[n]:" line: the one-layer net with rand; f-strings; no_grad, enable_grad and
# x @ w; Jacobian products on eye(5).
# --notebook shows the last value of each cell as Jupyter does. Cells that print random numbers or
# memory addresses show other values than the notebook; every other output is the notebook's.


# In[1]:
import torch


# In[2]:
x = torch.ones(5) #input tensor
y = torch.zeros(3)
w = torch.rand(size=(5, 3), requires_grad = True) # 建立一個5x3的矩陣才可以做線性轉換
b = torch.rand(3, requires_grad = True)

z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)


# In[3]:
print('Gradient function for z =',z.grad_fn)
print('Gradient function for loss =', loss.grad_fn)


# In[4]:
print(f'current grad without performing loss.backward() is w\'s {w.grad}, bias\'s {b.grad}')


# In[5]:
loss.backward()
print("current grad after performing loss.backward()")
print(w.grad)
print(b.grad)


# In[6]:
z = torch.matmul(x, w)+b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)

with torch.enable_grad():
    z = x @ w + b
print(z.requires_grad)

z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)


# In[20]:
inp = torch.eye(5, requires_grad = True)
print(f'Current inp matrix is :')
print({inp})


# In[21]:
out = (inp+1).pow(2)
print(f'Output is')
print(out)


# In[22]:
out.backward(torch.ones_like(inp), retain_graph=True)
print("First call\n", inp.grad)
out.backward(torch.ones_like(inp), retain_graph=True)
print("\nSecond call\n", inp.grad)
inp.grad.zero_()
out.backward(torch.ones_like(inp), retain_graph=True)
print("\nCall after zeroing gradients\n", inp.grad)
