"""Passes within the `pg_tensor` stage: tensor-simplify (tensor_simplify.py), matmul-layout
(matmul_layout.py), tensor-split-reduce (tensor_split_reduce.py), tensor-legalize-bf16
(tensor_legalize_bf16.py)."""
