"""torch's free-function forms of Tensor methods (`pg.asin(x)` is `x.asin()`), and the
free functions that have no method form (`meshgrid`, `atleast_1d/2d/3d`).

picograd/__init__.py lists the same names (`_FUNCTIONS`) so that `pg.<name>` resolves them
lazily; tests/e2e/test_shape_extra.py checks that both lists agree.

    import picograd as pg
    pg.atan2(pg.Tensor([1.0]), pg.Tensor([-1.0])).item(), pg.amax(pg.ones(2, 3), dim=1).shape
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from picograd.frontend.ops_shape_extra import atleast_1d, atleast_2d, atleast_3d, meshgrid
from picograd.frontend.tensor import Tensor

# Tensor methods that torch also has as free functions taking the tensor first
METHOD_FORMS = """
abs absolute acos acosh add addbmm addmm addmv addr adjoint all allclose amax amin aminmax
any arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort argwhere asin
asinh atan atan2 atanh baddbmm bernoulli bincount bitwise_and bitwise_not bitwise_or
bitwise_xor bmm bucketize ceil celu chunk clamp clamp_max clamp_min clip clone copysign cos
cosh count_nonzero cross cummax cummin cumprod cumsum deg2rad detach diag diag_embed
diagonal div dot dsplit erf erfc erfinv exp exp2 expm1 fix flatten flip fliplr flipud floor
floor_divide fmod frac gather ger hardshrink histc hsplit hypot index_add index_copy
index_fill index_put index_select inner is_complex is_floating_point is_nonzero isclose
isfinite isinf isnan isneginf isposinf isreal kron kthvalue lerp log log10 log1p log2
log_softmax logaddexp logaddexp2 logcumsumexp logical_not logsumexp masked_fill
masked_select matmul max mean median min mm mode moveaxis movedim msort mul multinomial mv
nan_to_num nanmean nanmedian nansum narrow neg negative nonzero norm numel outer permute
positive pow prelu prod rad2deg randperm reciprocal relu remainder repeat_interleave reshape
roll rot90 round rrelu rsqrt scatter scatter_add scatter_reduce searchsorted selu sgn
sigmoid sign sin sinh softmax sort split sqrt square squeeze std std_mean sub sum swapaxes
swapdims t take take_along_dim tan tanh tensor_split threshold tile topk trace transpose
tril triu true_divide trunc unbind unflatten unique unique_consecutive unsqueeze var
var_mean vdot vsplit xlogy
""".split()  # noqa: SIM905  (a word list reads better than 180 quoted names)


def _method_form(name: str) -> Callable[..., Any]:
    method = getattr(Tensor, name)

    def free(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return method(input, *args, **kwargs)

    free.__name__ = free.__qualname__ = name
    free.__doc__ = f"torch.{name}(input, ...): the same as input.{name}(...)."
    return free


FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{name: _method_form(name) for name in METHOD_FORMS if hasattr(Tensor, name)},
    "meshgrid": meshgrid, "atleast_1d": atleast_1d, "atleast_2d": atleast_2d,
    "atleast_3d": atleast_3d,
}
globals().update(FUNCTIONS)

__all__ = sorted(FUNCTIONS)  # pyright: ignore[reportUnsupportedDunderAll]
