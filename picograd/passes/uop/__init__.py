"""Passes that produce or work in the `pg_uop` stage.

    convert_loop_to_uop.py   convert-loop-to-uop: one ordered block of micro-ops per kernel
    vector_lanes.py          how convert-loop-to-uop{vectorize=true} emits lanes as vectors
    uop_simplify.py          uop-simplify: scalar rules to a fixpoint
    uop_contract.py          uop-contract: a sum of products steps by fused multiply-adds
    uop_gpu_map.py           uop-gpu-map: global ranges onto work groups and work items
    gpu_map_plan.py          what uop-gpu-map decides per kernel (nests, reductions, launch)
    gpu_map_emit.py          how uop-gpu-map rewrites a kernel to carry out that plan
    uop_legalize.py          uop-legalize: rewrite what the target's capability table lacks
"""
