"""The names round 6 of pasting PyTorch's documentation added (issue 15), registered by
importing their modules: the F.* functions of pyfunc6.py, the nn modules of pynn6.py, the lr
schedulers of pysched3.py; then torch.nn's new classes made
class values (pynnclass.py)."""

from __future__ import annotations

from . import (
    pybilinear6,  # noqa: F401  (registers F.bilinear, nn.Bilinear)
    pydrop6,  # noqa: F401  (registers F.alpha_dropout, nn.AlphaDropout, nn.ChannelShuffle...)
    pyembed6,
    pyfunc6,  # noqa: F401  (registers F.glu, F.prelu, F.pad, F.one_hot, F.embedding, ...)
    pyloss6,  # noqa: F401  (registers GaussianNLLLoss, CosineEmbeddingLoss, MultiMarginLoss...)
    pynn6,  # noqa: F401  (registers nn.GLU, nn.PReLU, the padding modules, nn.Embedding, ...)
    pynnclass,
    pynorm6,  # noqa: F401  (registers F.layer_norm, nn.LayerNorm, nn.GroupNorm, nn.RMSNorm...)
    pypaste5,  # noqa: F401  (round 5's names first: wrap_all below sees them all)
    pysched3,  # noqa: F401  (registers CyclicLR, OneCycleLR, CosineAnnealingWarmRestarts)
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
})
pynnclass.wrap_all()
pyembed6.register()  # (F.embedding_bag, nn.EmbeddingBag, from_pretrained)
