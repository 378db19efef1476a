"""Passes that produce or work in the `pg_loop` stage.

    convert_sched_to_loop.py   convert-sched-to-loop: kernels as ranges, loads and stores
    views.py                   the index arithmetic of movement ops (used by the above)
    loop_simplify.py           loop-simplify: index and mask rules to a fixpoint
    loop_upcast.py             loop-upcast: register tiling of reduce kernels (CPU)
    bounds.py                  value ranges of index expressions (for the rules' guards)
"""
