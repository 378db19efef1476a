"""Neural-network building blocks, as in `torch.nn`.

    import picograd.nn as nn
    import picograd.nn.functional as F
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    loss = F.cross_entropy(model(x), y)

    module.py       Module (parameters, buffers, state_dict, train/eval), StateDictError
    basic.py        linear, dropout: the functional forms Linear, Dropout and attention use
    layers.py       Linear, Sequential, ReLU, Flatten, Dropout
    containers.py   ModuleList, ModuleDict, ParameterList, ParameterDict
    recurrent.py    RNN, LSTM, GRU and their cells (torch's state-dict layout)
    transformer.py  Transformer{Encoder,Decoder}[Layer], Transformer
    activations.py  GELU, SiLU, Sigmoid, Tanh, LeakyReLU, ELU, Softplus, Mish, Hardswish,
                    Hardsigmoid, ReLU6
    conv.py         conv2d, conv_transpose2d; Conv2d, ConvTranspose2d
    pool.py         max_pool2d, avg_pool2d; MaxPool2d, AvgPool2d
    norm.py         batch_norm, layer_norm, group_norm, rms_norm, embedding and their layers
    attention.py    scaled_dot_product_attention; MultiheadAttention
    resize.py       interpolate; Upsample
    functional.py   losses, the softmax family, one_hot, and the functional forms above
    init.py         torch's initialisers (kaiming, xavier, trunc_normal, ...)
    state.py        safetensors files and training checkpoints (model + optimiser)

`functional` imports the layer modules; none of them imports `functional`.
"""

from picograd.nn import functional, init
from picograd.nn.activations import (
    ELU,
    GELU,
    Hardsigmoid,
    Hardswish,
    LeakyReLU,
    Mish,
    ReLU6,
    Sigmoid,
    SiLU,
    Softplus,
    Tanh,
)
from picograd.nn.attention import MultiheadAttention
from picograd.nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList
from picograd.nn.conv import Conv2d, ConvTranspose2d
from picograd.nn.layers import Dropout, Flatten, Linear, ReLU, Sequential
from picograd.nn.module import Module, StateDictError
from picograd.nn.norm import BatchNorm1d, BatchNorm2d, Embedding, GroupNorm, LayerNorm, RMSNorm
from picograd.nn.pool import AvgPool2d, MaxPool2d
from picograd.nn.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from picograd.nn.resize import Upsample
from picograd.nn.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["ELU", "GELU", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Conv2d", "ConvTranspose2d",
           "Dropout", "Embedding", "Flatten", "GroupNorm", "Hardsigmoid", "Hardswish",
           "LayerNorm", "LeakyReLU", "Linear", "MaxPool2d", "Mish", "Module",
           "MultiheadAttention", "RMSNorm", "ReLU", "ReLU6", "Sequential", "SiLU", "Sigmoid",
           "Softplus", "StateDictError", "Tanh", "Upsample", "functional", "init"]
# containers, recurrent and transformer layers
__all__ += ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "ModuleDict", "ModuleList",
            "ParameterDict", "ParameterList", "RNNCell", "Transformer", "TransformerDecoder",
            "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer"]
