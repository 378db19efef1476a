"""picograd/passes/sched"""
