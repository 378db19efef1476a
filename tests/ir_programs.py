"""pg_tensor programs that several tests compile, as MLIR text.

    matmul_text(m, k, n)    @main(%a: m x k, %b: k x n) -> a @ b, as reshape, expand,
                            multiply and a sum over k (what the frontend builds)
"""

from __future__ import annotations


def matmul_text(m: int, k: int, n: int) -> str:
    a, b, p, s, r = (f"{m}x{k}xf32", f"{k}x{n}xf32", f"{m}x{k}x{n}xf32", f"{m}x1x{n}xf32",
                     f"{m}x{n}xf32")
    return f"""
func.func @main(%a: tensor<{a}>, %b: tensor<{b}>) -> tensor<{r}> {{
  %a3 = pg_tensor.reshape %a : tensor<{a}> -> tensor<{m}x{k}x1xf32>
  %ae = pg_tensor.expand %a3 : tensor<{m}x{k}x1xf32> -> tensor<{p}>
  %b3 = pg_tensor.reshape %b : tensor<{b}> -> tensor<1x{k}x{n}xf32>
  %be = pg_tensor.expand %b3 : tensor<1x{k}x{n}xf32> -> tensor<{p}>
  %p = pg_tensor.binary mul %ae, %be : tensor<{p}>
  %s = pg_tensor.reduce sum %p {{axes = array<i64: 1>}} : tensor<{p}> -> tensor<{s}>
  %r = pg_tensor.reshape %s : tensor<{s}> -> tensor<{r}>
  func.return %r : tensor<{r}>
}}
"""
