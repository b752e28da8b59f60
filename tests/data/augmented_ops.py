import torch
a = 17
a //= 5
a %= 2
b = 6
b &= 3
b |= 8
b ^= 1
print(a, b)
x = torch.tensor([7., -7., 5.5])
y = x
x //= 2
print(y)
x %= 3
print(y)
m = torch.tensor([6, 5, 12])
n = m
m &= 4
m |= 1
m ^= 3
print(n)
k = torch.tensor([True, False])
k ^= True
print(k)
i = torch.tensor([1, 2])
i //= 2
print(i)
z = 10
z%=4
print(z)
