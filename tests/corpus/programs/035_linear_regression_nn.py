# gradcli corpus 035: linear regression with nn.Linear, nn.MSELoss and optim.SGD; state_dict and eval()
# Source: written for the gradcli corpus, modelled on the linear regression notebooks of PyTorch courses
#   (e.g. yunjey/pytorch-tutorial tutorials/01-basics/linear_regression/main.py, MIT). Not a copy; fixed data
#   and initial weights instead of numpy data and random init.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn as nn

x_train = torch.tensor([[3.3], [4.4], [5.5], [6.71], [6.93], [4.168], [9.779], [6.182]])
y_train = torch.tensor([[1.7], [2.76], [2.09], [3.19], [1.694], [1.573], [3.366], [2.596]])

input_size, output_size = 1, 1
num_epochs = 60
learning_rate = 0.001

model = nn.Linear(input_size, output_size)
nn.init.constant_(model.weight, 0.2)
nn.init.constant_(model.bias, -0.1)

criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

for epoch in range(num_epochs):
    outputs = model(x_train)
    loss = criterion(outputs, y_train)

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    if (epoch + 1) % 15 == 0:
        print('Epoch [{}/{}], Loss: {:.4f}'.format(epoch + 1, num_epochs, loss.item()))

model.eval()
with torch.no_grad():
    predicted = model(torch.tensor([[5.0], [10.0]]))
print(predicted)
print(list(model.state_dict().keys()))
print(model)
