"""The compile driver: pipeline choice, caches, PG_DUMP and debug hooks -> a runnable Program.

    driver.py         program_for (realize's one way in), compile_module, compile_stats
    pipelines.py      the default pipelines (composed from shared parts), parsing, running
    pass_registry.py  every picograd pass by name (loaded lazily), plus xDSL's
    disk_cache.py     the graph level of the on-disk cache (bytes in `picograd.disk_store`)
    dump.py           PG_DUMP's files

It sits above `debug` (which it calls through hooks), the runtimes, the lowerings and the
passes; the frontend and the tools sit above it. This package imports none of its modules
itself, so that `opt-tool`, which needs only the pipelines and the registry, starts without
loading the runtimes.
"""
