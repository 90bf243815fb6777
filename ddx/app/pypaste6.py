"""The names round 6 of pasting PyTorch's documentation added (issue 15), registered by
importing their modules: the F.* functions and nn modules of pyfunc6.py/pynn6.py (activations,
pads, shuffles, embedding, feature dropout), pyloss6.py (losses), pynorm6.py (norms),
pyembed6.py (embedding_bag), pydrop6.py (alpha dropout, channel shuffle), pybilinear6.py, the
hook-based nn.utils.weight_norm/spectral_norm of pyweightnorm6.py and the lr schedulers of
pysched3.py, pybatchnorm.py's batch norms and pyrnn.py's
recurrent layers; then torch.nn's new classes made class values
(pynnclass.py)."""

from __future__ import annotations

from . import (
    pybatchnorm,  # noqa: F401  (registers F.batch_norm, nn.BatchNorm1d/2d/3d)
    pybilinear6,  # noqa: F401  (registers F.bilinear, nn.Bilinear)
    pyctc6,  # noqa: F401  (registers F.ctc_loss, nn.CTCLoss)
    pydrop6,  # noqa: F401  (registers F.alpha_dropout, nn.AlphaDropout, nn.ChannelShuffle...)
    pyembed6,  # (registered below: F.embedding_bag, nn.EmbeddingBag, from_pretrained)
    pyfunc6,  # noqa: F401  (registers F.glu, F.prelu, F.pad, F.one_hot, F.embedding, ...)
    pyloss6,  # noqa: F401  (registers GaussianNLLLoss, CosineEmbeddingLoss, MultiMarginLoss...)
    pynn6,  # noqa: F401  (registers nn.GLU, nn.PReLU, the padding modules, nn.Embedding, ...)
    pynnclass,
    pynnconv,  # noqa: F401  (registers nn.Conv1d-3d, nn.MaxPool1d-3d, nn.AvgPool1d-3d)
    pynorm6,  # noqa: F401  (registers F.layer_norm, nn.LayerNorm, nn.GroupNorm, nn.RMSNorm...)
    pyoptim6,  # noqa: F401  (registers torch.optim.AdamW, RMSprop, Adagrad)
    pyparam6,  # noqa: F401  (registers nn.utils.parametrizations.weight_norm)
    pypaste5,  # noqa: F401  (round 5's names first: wrap_all below sees them all)
    pyrnn,  # noqa: F401  (registers nn.RNN, nn.GRU and the cells)
    pysched3,  # noqa: F401  (registers CyclicLR, OneCycleLR, CosineAnnealingWarmRestarts)
    pyweightnorm6,  # noqa: F401  (registers nn.utils.weight_norm, nn.utils.spectral_norm)
)

pynnclass.FILES.update({
    "padding": tuple(k for k in pynn6.CLASSES if "Pad" in k),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "channelshuffle": ("ChannelShuffle",),
    "distance": ("PairwiseDistance", "CosineSimilarity"),
    "sparse": ("Embedding", "EmbeddingBag"),
    "dropout": ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                "FeatureAlphaDropout"),
    "normalization": ("LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"),
    "batchnorm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"),
    "rnn": ("RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell"),
})
pynnclass.wrap_all()
pyembed6.register()  # (F.embedding_bag, nn.EmbeddingBag, from_pretrained)


def _classes() -> None:
    """torch.optim's optimizers and lr schedulers print as the classes they are."""
    from .pymodules import EXTRA, MODULES, Native

    optim = EXTRA["torch.optim"]
    for name, value in list(optim.items()):
        if type(value) is Native and name[:1].isupper():
            optim[name] = pynnclass.NNClass(name, value.fn, f"torch.optim.{name.lower()}")
    members = MODULES["torch.optim.lr_scheduler"].members
    for name, value in list(members.items()):
        if type(value) is Native and name[:1].isupper():
            members[name] = pynnclass.NNClass(name, value.fn, "torch.optim.lr_scheduler")


_classes()
