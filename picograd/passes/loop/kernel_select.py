"""The `kernel=` option of the schedule passes: which `pg_loop.kernel`s of a module it names.

    selected_kernels(module, "k3", "loop-split")  -> [the kernel @k3]
    selected_kernels(module, "", "loop-split")    -> every pg_loop kernel
    schedule_kernels(module, "k3", "loop-split", actions)

A name that is not a kernel of the module fails the pass, listing the kernels there are.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_loop as L
from picograd.passes.loop.schedule import Action, ScheduleError, apply_schedule


def selected_kernels(module: ModuleOp, name: str, pass_name: str) -> list[L.KernelOp]:
    kernels = [k for k in module.ops if isinstance(k, L.KernelOp)]
    if not name:
        return kernels
    chosen = [k for k in kernels if k.sym_name.data == name]
    if not chosen:
        known = ", ".join(f"@{k.sym_name.data}" for k in kernels) or "none"
        raise PassFailedException(f"{pass_name}: no pg_loop kernel @{name} (kernels: {known})")
    return chosen


def schedule_kernels(module: ModuleOp, name: str, pass_name: str,
                     actions: list[Action]) -> None:
    """Apply `actions` to the kernel named `name`, where an action that does not apply fails
    the pass with the reason; or, `name` empty, to every kernel they all apply to (the
    others are left as they are)."""
    if name:
        for kernel in selected_kernels(module, name, pass_name):
            try:
                apply_schedule(kernel, actions)
            except ScheduleError as e:
                raise PassFailedException(f"{pass_name}: {e}") from None
        return
    for kernel in selected_kernels(module, name, pass_name):
        trial = kernel.clone()
        try:
            apply_schedule(trial, actions)
        except ScheduleError:
            trial.erase()
            continue
        module.body.block.insert_op_before(trial, kernel)
        kernel.detach()
        kernel.erase()
