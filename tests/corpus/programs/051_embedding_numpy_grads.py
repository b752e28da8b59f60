# gradcli corpus 051: nn.Embedding gradients only for the rows looked up; printing gradients with .numpy()
# Source: written for the gradcli corpus, modelled on the word-embedding examples of "Word Embeddings:
#   Encoding Lexical Semantics" (pytorch/tutorials beginner_source/nlp/word_embeddings_tutorial.py,
#   BSD-3-Clause), with a fixed embedding table. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn as nn

word_to_ix = {"hello": 0, "world": 1, "autograd": 2, "tensor": 3}
embeds = nn.Embedding(len(word_to_ix), 2)
with torch.no_grad():
    embeds.weight.copy_(torch.tensor([[0.1, 0.2], [0.3, -0.4], [1.0, 0.5], [-0.7, 0.0]]))

sentence = "hello autograd hello".split()
idx = torch.tensor([word_to_ix[w] for w in sentence], dtype=torch.long)
vectors = embeds(idx)
print(vectors)

score = (vectors * torch.tensor([1.0, -1.0])).sum()
score.backward()
print(embeds.weight.grad)
print(embeds.weight.grad.numpy())
print(vectors.detach().numpy().shape)
untouched = [w for w, i in word_to_ix.items() if embeds.weight.grad[i].abs().sum() == 0]
print("no gradient for:", untouched)
