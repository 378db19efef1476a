"""Passes that produce or work in the `pg_uop` stage.

    convert_loop_to_uop.py   convert-loop-to-uop: one ordered block of micro-ops per kernel
    uop_simplify.py          uop-simplify: scalar rules to a fixpoint
    uop_gpu_map.py           uop-gpu-map: global ranges onto work groups and work items
    uop_legalize.py          uop-legalize: rewrite what the target's capability table lacks
"""
