"""BEAM search: each kernel's schedule chosen by timing candidates on the device.

    search.py    choose_schedules: per kernel, from the heuristic's schedule, a beam
                 search, the winner checked and applied (the compile driver calls it)
    space.py     the neighbours of a schedule and the cheap filter
    measure.py   candidates compiled (in children, with a time limit) and timed
    store.py     the winners on disk, keyed by kernel, pipeline, device and toolchain

Turned on by `BEAM=<width>`, `pg.Context(beam=...)` or `realize(beam=...)`; see
docs/design.md, "BEAM search".
"""
