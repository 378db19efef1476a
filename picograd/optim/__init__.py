"""Optimisers, learning-rate schedulers and the gradient scaler, with torch's names, formulas
and defaults:

    SGD, Adam, AdamW, Adamax, NAdam, RAdam    picograd/optim/sgd.py, adam.py
    RMSprop, Adagrad, Adadelta                 picograd/optim/adaptive.py
    LAMB                                       picograd/optim/lamb.py (torch has none)
    lr_scheduler.*                             picograd/optim/lr_scheduler.py (re-exported)
    GradScaler                                 picograd/optim/grad_scaler.py

    opt = pg.optim.AdamW(model.parameters(), lr=1e-3)
    sched = pg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)

Every optimiser's `step()` realizes the whole update in one graph and keeps per-step values
(lr, bias corrections) in 0-d buffers, so a training step compiles once
(picograd/optim/optimizer.py).
"""

from picograd.optim import lr_scheduler
from picograd.optim.adam import Adam, Adamax, AdamW, NAdam, RAdam
from picograd.optim.adaptive import Adadelta, Adagrad, RMSprop
from picograd.optim.grad_scaler import GradScaler
from picograd.optim.lamb import LAMB
from picograd.optim.lr_scheduler import (
    ChainedScheduler,
    ConstantLR,
    CosineAnnealingLR,
    CosineAnnealingWarmRestarts,
    CyclicLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    LRScheduler,
    MultiplicativeLR,
    MultiStepLR,
    OneCycleLR,
    PolynomialLR,
    ReduceLROnPlateau,
    SequentialLR,
    StepLR,
)
from picograd.optim.optimizer import Optimizer
from picograd.optim.sgd import SGD

__all__ = [
    "LAMB", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "ChainedScheduler",
    "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
    "ExponentialLR", "GradScaler", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
    "MultiplicativeLR", "NAdam", "OneCycleLR", "Optimizer", "PolynomialLR", "RAdam",
    "RMSprop", "ReduceLROnPlateau", "SequentialLR", "StepLR", "lr_scheduler",
]
