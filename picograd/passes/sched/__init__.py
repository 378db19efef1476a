"""Passes that produce the `pg_sched` stage.

    convert_tensor_to_sched.py   convert-tensor-to-sched: kernels, buffers, launch order
    kernel_grouping.py           which pg_tensor ops fuse into one kernel (its rules)
"""
