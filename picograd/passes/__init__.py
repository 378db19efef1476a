"""picograd's passes, grouped by the stage they work in or produce.

    tensor/   tensor-simplify
    sched/    convert-tensor-to-sched (with kernel grouping = fusion)
    loop/     convert-sched-to-loop (with the index arithmetic of views), loop-simplify,
              the schedule actions (loop-split, loop-interchange, loop-split-reduce,
              loop-block-reduce, loop-stash, loop-collapse, loop-unflatten, loop-schedule) and the
              passes that choose them (loop-optimize, loop-upcast)
    uop/      convert-loop-to-uop, uop-simplify, uop-gpu-map, uop-legalize
    rules/    the declarative rewrite engine the simplification passes are written in

A conversion `convert-<src>-to-<dst>` lives with the stage it produces (`dst`): so
convert-tensor-to-sched is in sched/, and each convert-uop-to-<target> is in
`picograd/lowering/<target>/`. A pass's file is named after the pass (`loop-simplify` is
`loop/loop_simplify.py`). The pass manager, the default pipelines and the registry of names
are the compile driver's (`picograd.compiler`).
"""
