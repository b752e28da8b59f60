# gradcli run --notebook --keep-going --seed 0 examples/seed_001_requires_grad_and_errors.py
#
# The code cells of the PyTorch tutorial examples/seeds/001_*.txt as the notebook has them, each after its
# "# In[n]:" line: requires_grad, grad_fn, mean; backward with a gradient vector;
# the errors of a non-scalar backward(), of a second backward and of y.zero_grad(); a non-leaf's .grad.
# --notebook shows the last value of each cell as Jupyter does. Cells that print random numbers or
# memory addresses show other values than the notebook; every other output is the notebook's.
# Three cells fail, as they do in the notebook: --keep-going reports each error on standard error and
# goes on. The notebook's cell "In [ ]: y = tor" was never run and is left out.


# In[37]:
import torch


# In[38]:
x = torch.ones(2, 2, requires_grad=True)
print(x)


# In[3]:
y = x + 2
print(y)


# In[4]:
y.grad_fn


# In[5]:
z = y * y * 3


# In[6]:
out = z.mean()


# In[7]:
print(z, out)


# In[8]:
a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)


# In[9]:
out.backward()


# In[10]:
print(x.grad)


# In[11]:
y.grad


# In[14]:
y.retain_grad


# In[18]:
z.retain_grad


# In[19]:
x = torch.randn(3, requires_grad=True)

y = x * 2


# In[20]:
y


# In[22]:
y.backward()


# In[23]:
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)


# In[24]:
x.grad


# In[25]:
x


# In[26]:
v = torch.tensor([1, 1.0, 1], dtype=torch.float)
y.backward(v)


# In[27]:
y.zero_grad()


# In[28]:
x = torch.randn(3, requires_grad=True)

y = x * 2


# In[29]:
v = torch.tensor([1, 1.0, 1], dtype=torch.float)
y.backward(v)


# In[30]:
x.grad


# In[31]:
x = torch.rand(1, requires_grad=True)


# In[32]:
y = x * x + 2* x+1


# In[33]:
y


# In[34]:
y.backward()


# In[35]:
x.grad


# In[36]:
x
