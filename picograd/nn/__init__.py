"""Neural-network building blocks, as in `torch.nn`.

    import picograd.nn as nn
    import picograd.nn.functional as F
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    loss = F.cross_entropy(model(x), y)

    module.py       Module (parameters, buffers, state_dict, train/eval), StateDictError
    basic.py        linear, dropout: the functional forms Linear, Dropout and attention use
    layers.py       Linear, Sequential, ReLU, Flatten, Dropout
    layers_more.py  Bilinear, ChannelShuffle, UpsamplingNearest2d/Bilinear2d (and F forms)
    dropout_more.py Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout, Softmax2d
    distance.py     pairwise_distance, pdist; PairwiseDistance, CosineSimilarity
    embedding_bag.py  embedding_bag; EmbeddingBag
    functional_aliases.py  F's in-place activations (relu_, ...) and *_with_indices pools
    containers.py   ModuleList, ModuleDict, ParameterList, ParameterDict
    recurrent.py    RNN, LSTM, GRU and their cells (torch's state-dict layout)
    transformer.py  Transformer{Encoder,Decoder}[Layer], Transformer
    activations.py  GELU, SiLU, Sigmoid, Tanh, LeakyReLU, ELU, Softplus, Mish, Hardswish,
                    Hardsigmoid, ReLU6, CELU, SELU, Hardtanh, Softsign, Softmin, Softmax,
                    LogSoftmax, LogSigmoid, GLU, Hardshrink, Softshrink, Tanhshrink,
                    Threshold, RReLU, PReLU, Identity
    conv.py         conv2d, conv_transpose2d (2-D, fused); conv_nd.py: 1-3 D forms
    conv_layers.py  Conv1d/2d/3d, ConvTranspose1d/2d/3d
    pool.py         max/avg/lp pooling in 1-3 D and their layers (windows.py: the views)
    pool_adaptive.py  adaptive avg/max pooling, max_unpool, and their layers
    norm.py         batch_norm, layer_norm, group_norm, rms_norm, embedding and their layers
    norm_instance.py  instance_norm, local_response_norm; InstanceNorm1d/2d/3d, BatchNorm3d, ...
    padding.py      ZeroPad/ConstantPad/ReflectionPad/ReplicationPad/CircularPad 1-3d, Unflatten
    attention.py    scaled_dot_product_attention; MultiheadAttention
    resize.py       interpolate, pixel_(un)shuffle; Upsample, PixelShuffle, PixelUnshuffle
    fold.py         unfold, fold (im2col and its adjoint); Unfold, Fold
    losses.py       every torch loss function; loss_layers.py: the loss modules
    losses_more.py  ctc_loss, multilabel_margin_loss, triplet_margin_with_distance_loss
    functional.py   the softmax family, one_hot, and the functional forms above
    init.py         torch's initialisers (kaiming, xavier, trunc_normal, ...)
    state.py        safetensors files and training checkpoints (model + optimiser),
                    torch.save files (load_torch, torch_pickle.py)
    utils.py        clip_grad_norm_, clip_grad_value_, parameters_to_vector

`functional` imports the layer modules; none of them imports `functional`.
"""

from picograd.nn import functional, init, utils
from picograd.nn.activations import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    Identity,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from picograd.nn.attention import MultiheadAttention
from picograd.nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList
from picograd.nn.conv_layers import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from picograd.nn.distance import CosineSimilarity, PairwiseDistance
from picograd.nn.dropout_more import (
    AlphaDropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
    Softmax2d,
)
from picograd.nn.embedding_bag import EmbeddingBag
from picograd.nn.fold import Fold, Unfold
from picograd.nn.layers import Dropout, Flatten, Linear, ReLU, Sequential
from picograd.nn.layers_more import (
    Bilinear,
    ChannelShuffle,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from picograd.nn.loss_layers import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    NLLLoss2d,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from picograd.nn.module import Module, StateDictError
from picograd.nn.norm import BatchNorm1d, BatchNorm2d, Embedding, GroupNorm, LayerNorm, RMSNorm
from picograd.nn.norm_instance import (
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LocalResponseNorm,
)
from picograd.nn.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    Unflatten,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from picograd.nn.pool import (
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from picograd.nn.pool_adaptive import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from picograd.nn.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from picograd.nn.resize import PixelShuffle, PixelUnshuffle, Upsample
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
           "Softplus", "StateDictError", "Tanh", "Upsample", "functional", "init", "utils"]
__all__ += ["BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
            "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
            "MSELoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
            "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss"]
# loss_layers.py: the losses of losses_more.py, NLLLoss2d
__all__ += ["CTCLoss", "MultiLabelMarginLoss", "NLLLoss2d", "TripletMarginWithDistanceLoss"]
__all__ += ["PixelShuffle", "PixelUnshuffle"]
__all__ += ["BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "LocalResponseNorm"]
__all__ += ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
            "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
            "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "Unflatten",
            "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]
__all__ += ["Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose3d"]
__all__ += ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
            "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
__all__ += ["AvgPool1d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d",
            "MaxPool3d"]
# containers, recurrent and transformer layers
__all__ += ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "ModuleDict", "ModuleList",
            "ParameterDict", "ParameterList", "RNNCell", "Transformer", "TransformerDecoder",
            "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer"]
__all__ += ["Fold", "Unfold"]
# activations.py
__all__ += ["CELU", "GLU", "SELU", "Hardshrink", "Hardtanh", "Identity", "LogSigmoid",
            "LogSoftmax", "PReLU", "RReLU", "Softmax", "Softmin", "Softshrink", "Softsign",
            "Tanhshrink", "Threshold"]
# distance.py, dropout_more.py, embedding_bag.py, layers_more.py
__all__ += ["AlphaDropout", "Bilinear", "ChannelShuffle", "CosineSimilarity", "Dropout1d",
            "Dropout2d", "Dropout3d", "EmbeddingBag",
            "FeatureAlphaDropout", "PairwiseDistance", "Softmax2d", "UpsamplingBilinear2d",
            "UpsamplingNearest2d"]
