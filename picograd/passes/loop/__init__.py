"""Passes that produce or work in the `pg_loop` stage.

    convert_sched_to_loop.py   convert-sched-to-loop: kernels as ranges, loads and stores
    views.py                   the index arithmetic of movement ops (used by the above)
    loop_simplify.py           loop-simplify: index and mask rules to a fixpoint
    loop_nest.py               what the actions share: ranges and reduces by number
    schedule.py                loop actions (split, interchange, collapse, unflatten) and
                               the schedule (a list of actions, recorded on the kernel)
    reduce_actions.py          the actions that reorder a reduction: split_reduce,
                               chunk_reduce, block_reduce
    stash_action.py            the action stash: what a reduce and the next range share,
                               computed once
    kernel_select.py           the `kernel=` option of the schedule passes
    loop_split.py              loop-split: one action, split a range
    loop_interchange.py        loop-interchange: one action, move a range inward
    loop_split_reduce.py       loop-split-reduce: one action, partial reductions in lanes
    loop_block_reduce.py       loop-block-reduce: one action, a sum in blocks (cache)
    loop_chunk_reduce.py       loop-chunk-reduce: one action, a sum of chunk sums (accuracy)
    loop_stash.py              loop-stash: one action, what a reduce and the next range
                               share computed once
    loop_collapse.py           loop-collapse: one action, merge a range with the one it holds
    loop_unflatten.py          loop-unflatten: one action, a range into two nested ones
    lane_vectors.py            which lanes have a vector form (vectorize, loop-optimize)
    loop_schedule.py           loop-schedule: replay a kernel's list of actions
    loop_optimize.py           loop-optimize: pick each kernel's schedule (CPU heuristic)
    loop_unswitch.py           loop-unswitch: a range compared with constants, one range
                               per piece between them (concatenations without masks)
    loop_upcast.py             loop-upcast: register tiling with fixed sizes
    bounds.py                  value ranges of index expressions (for the rules' guards)
"""
