"""Activation layers, as in `torch.nn`: each applies the Tensor method of the same name.

    GELU(approximate="none")  SiLU()  Sigmoid()  Tanh()  LeakyReLU(negative_slope=0.01)
    ELU(alpha=1.0)  Softplus(beta=1.0, threshold=20.0)  Mish()  Hardswish()  Hardsigmoid()
    ReLU6()  CELU(alpha)  SELU()  Hardtanh(min_val, max_val)  Softsign()  Softmin(dim)
    Softmax(dim)  LogSoftmax(dim)  LogSigmoid()  GLU(dim)  Hardshrink(lambd)
    Softshrink(lambd)  Tanhshrink()  Threshold(threshold, value)  RReLU(lower, upper)
    PReLU(num_parameters, init)  Identity()

`inplace=` is accepted where torch takes it (the values are the same; see
activation_functions.py). `PReLU` has torch's parameter `weight` (so its state dicts load
unchanged); `RReLU` draws its slopes in training mode and uses their mean in eval mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from picograd.frontend.tensor import Tensor
from picograd.nn.activation_functions import implicit_softmax_dim
from picograd.nn.module import Module


class GELU(Module):
    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return x.gelu(approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.silu()


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return x.leaky_relu(self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return x.elu(self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return x.softplus(self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.mish()


class Hardswish(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.hardswish()


class Hardsigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.hardsigmoid()


class ReLU6(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.relu6()


class CELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return x.celu(self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class SELU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x.selu()


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: Tensor) -> Tensor:
        return x.hardtanh(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class Softsign(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.softsign()


class _AlongDim(Module):
    """A softmax-family layer: `dim`, or torch's implicit choice when None."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def _dim(self, x: Tensor) -> int:
        return implicit_softmax_dim(x.ndim) if self.dim is None else self.dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_AlongDim):
    def forward(self, x: Tensor) -> Tensor:
        return x.softmin(self._dim(x))


class Softmax(_AlongDim):
    def forward(self, x: Tensor) -> Tensor:
        return x.softmax(self._dim(x))


class LogSoftmax(_AlongDim):
    def forward(self, x: Tensor) -> Tensor:
        return x.log_softmax(self._dim(x))


class LogSigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.logsigmoid()


class GLU(Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return x.glu(self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardshrink(Module):
    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, x: Tensor) -> Tensor:
        return x.hardshrink(self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, x: Tensor) -> Tensor:
        return x.softshrink(self.lambd)


class Tanhshrink(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanhshrink()


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value = threshold, value

    def forward(self, x: Tensor) -> Tensor:
        return x.threshold(self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}"


class RReLU(Module):
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper = lower, upper

    def forward(self, x: Tensor) -> Tensor:
        return x.rrelu(self.lower, self.upper, self.training)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}"


class PReLU(Module):
    """x where x > 0, weight * x elsewhere: one learned slope, or one per channel (dim 1)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: str = "CPU",
                 dtype: object = None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Tensor(np.full(num_parameters, init, np.float32), dtype=dtype,
                             device=device, requires_grad=True)

    def forward(self, x: Tensor) -> Tensor:
        return x.prelu(self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Identity(Module):
    """Returns its input (its arguments are accepted and ignored, as torch's)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x
