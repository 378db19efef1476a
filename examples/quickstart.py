"""The README example: a lazy graph, one fused kernel, a matmul."""

import picograd as pg

a = pg.Tensor([[1.0, -2.0], [3.0, 4.0]])
b = pg.Tensor.full((2, 2), 0.5)
c = pg.Tensor([1.0, 1.0])                   # broadcast over rows
y = (a * b + c).relu().sum(axis=1)          # lazy: builds a graph, computes nothing
print(y.numpy())                            # [1.5 5.5]: compiles one fused kernel, runs it
print((a @ b).tolist())
