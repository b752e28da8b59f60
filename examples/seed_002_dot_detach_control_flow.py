# gradcli run --notebook --keep-going --seed 0 examples/seed_002_dot_detach_control_flow.py
#
# The code cells of the PyTorch tutorial examples/seeds/002_*.txt as the notebook has them, each after its
# "# In[n]:" line: y = 2 * dot(x, x), resetting .grad with zero_(), a non-scalar
# backward, detach, and a function with while and if differentiated as it runs ("DAGs are dynamic").
# --notebook shows the last value of each cell as Jupyter does. Cells that print random numbers or
# memory addresses show other values than the notebook; every other output is the notebook's.


# In[1]:
import torch


# In[2]:
x = torch.arange(4.0)
x


# In[3]:
# Can also create x = torch.arange(4.0, requires_grad=True)
x.requires_grad_(True)
x.grad  # The gradient is None by default


# In[5]:
torch.dot(x, x)


# In[4]:
y = 2 * torch.dot(x, x)
y


# In[6]:
y.backward()
x.grad


# In[8]:
x.grad, 4 * x


# In[9]:
x.grad == 4 * x


# In[10]:
x.sum()


# In[11]:
x.grad.zero_()  # Reset the gradient
y = x.sum()
y.backward()
x.grad


# In[18]:
x, x * x


# In[20]:
x.grad.zero_()
y = x * x
y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
x.grad


# In[22]:
y.sum(), torch.ones(len(y))


# In[64]:
x.grad.zero_()
y = x * x
u = y.detach()
z = u * x

z.sum().backward()
x.grad == u


# In[66]:
y, z, u, x.grad


# In[67]:
x.grad.zero_()
y.sum().backward()
x.grad == 2 * x


# In[68]:
def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c


# In[79]:
a = torch.randn(size=(), requires_grad=True)
a = torch.tensor(100., requires_grad=True)
d = f(a)
d.backward()
a, d


# In[80]:
a.grad == d / a, a.grad
