"""torch.nn.functional's activations beyond the basic ones (re-exported by functional.py):
each is the Tensor method of the same name (ops_activation.py), with torch's signature.

    celu selu hardtanh relu6 softsign softmin logsigmoid glu normalize hardshrink softshrink
    tanhshrink threshold rrelu prelu mish hardswish hardsigmoid

`inplace=True` is accepted and computes the same values out of place (picograd's tensors
are values: nothing else can observe the difference but the identity of the result).

    import picograd.nn.functional as F
    F.glu(pg.ones(2, 4)).shape, F.normalize(pg.Tensor([[3.0, 4.0]])).tolist()
"""

from __future__ import annotations

from picograd.frontend.tensor import Tensor


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return input.celu(alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.selu()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    return input.hardtanh(min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu6()


def softsign(input: Tensor) -> Tensor:
    return input.softsign()


def implicit_softmax_dim(ndim: int) -> int:
    """torch's legacy choice when softmax / softmin get no dim: 0 for 0-, 1- and 3-D."""
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: object = None) -> Tensor:
    x = input if dtype is None else input.cast(dtype)
    return x.softmin(implicit_softmax_dim(x.ndim) if dim is None else dim)


def logsigmoid(input: Tensor) -> Tensor:
    return input.logsigmoid()


def glu(input: Tensor, dim: int = -1) -> Tensor:
    return input.glu(dim)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: None = None) -> Tensor:
    """input / max(||input||_p over `dim`, eps), as torch (no gradient through the eps)."""
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return input.hardshrink(lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return input.softshrink(lambd)


def tanhshrink(input: Tensor) -> Tensor:
    return input.tanhshrink()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return input.threshold(threshold, value)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    return input.rrelu(lower, upper, training)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    return input.prelu(weight)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return input.mish()


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return input.hardswish()


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return input.hardsigmoid()


__all__ = ["celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid",
           "mish", "normalize", "prelu", "relu6", "rrelu", "selu", "softmin", "softshrink",
           "softsign", "tanhshrink", "threshold"]
