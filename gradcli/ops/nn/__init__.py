"""The ops of torch.nn.functional: convolution and pooling, softmax, normalization, embedding,
dropout, distances and losses.
"""
