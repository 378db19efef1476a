"""Learning-rate schedulers with torch's semantics (`torch.optim.lr_scheduler`): each sets
its optimiser's groups' `lr` at construction (epoch 0) and at every `step()`.

    opt = pg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = pg.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=100)
    for batch in data:
        ...; opt.step(); sched.step()
    sched.get_last_lr()            # one lr per group
    saved = sched.state_dict()     # every attribute but the optimiser (and lambdas)

As torch's, most schedulers are "chainable": `step()` multiplies the current `lr` by the
factor of this epoch (so several of them compose, ChainedScheduler), and `step(epoch)` uses the
closed form where one exists. A scheduler changes only a buffer the compiled step reads: the
step is not recompiled (OneCycleLR's and CyclicLR's momentum cycling likewise, for SGD's
`momentum` and Adam's `betas[0]`).
"""

from picograd.optim.cyclic import CyclicLR, OneCycleLR
from picograd.optim.plateau import ChainedScheduler, ReduceLROnPlateau, SequentialLR
from picograd.optim.scheduler_base import LRScheduler
from picograd.optim.schedules import (
    ConstantLR,
    CosineAnnealingLR,
    CosineAnnealingWarmRestarts,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)

__all__ = [
    "ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
    "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR",
    "StepLR",
]
