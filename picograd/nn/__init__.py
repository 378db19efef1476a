"""Neural-network building blocks, as in `torch.nn`.

    import picograd.nn as nn
    import picograd.nn.functional as F
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    loss = F.cross_entropy(model(x), y)
"""

from picograd.nn import functional
from picograd.nn.conv import AvgPool2d, Conv2d, MaxPool2d
from picograd.nn.layers import Dropout, Flatten, Linear, ReLU, Sequential
from picograd.nn.module import Module, StateDictError

__all__ = ["AvgPool2d", "Conv2d", "Dropout", "Flatten", "Linear", "MaxPool2d", "Module", "ReLU",
           "Sequential", "StateDictError", "functional"]
