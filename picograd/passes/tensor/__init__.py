"""Passes within the `pg_tensor` stage: tensor-simplify (tensor_simplify.py)."""
