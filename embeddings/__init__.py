"""depthsep.embeddings: the hypercube in the unit ball, the hard distribution mu and f_d.

THEORY §2.  An :class:`Embedding` maps {0,1}^n (cube order, :mod:`circuits.hypercube`) into the
unit ball.  :class:`ScaledCube` is the naive affine one (Lipschitz blow-up sqrt(n));
:class:`CodeEmbedding` uses a systematic linear code with certified minimum distance;
:class:`HardInstance` is the pair distribution mu_tau with the Lipschitz target f_d;
:class:`CubeInstance` is the [0,1]^{2n} variant of THEORY §2.5.
"""

from circuits._version import __version__ as __version__
from embeddings.base import (ContractReport, Embedding, ProductEmbedding, check_embedding,
                             ip_lipschitz_bound)
from embeddings.affine import ScaledCube
from embeddings.code import (MAX_CODE_BITS, CodeEmbedding, certified_min_distance,
                             random_code_distance_bound)
from embeddings.pair import LipschitzReport, PairInstance, Support
from embeddings.instance import MAX_INSTANCE_BITS, MAX_TAU, HardInstance, InstanceSummary
from embeddings.cube import CubeInstance

__all__ = [
    "Embedding", "ProductEmbedding", "ContractReport", "check_embedding", "ip_lipschitz_bound",
    "ScaledCube",
    "CodeEmbedding", "certified_min_distance", "random_code_distance_bound", "MAX_CODE_BITS",
    "HardInstance", "PairInstance", "CubeInstance", "Support", "InstanceSummary",
    "LipschitzReport", "MAX_TAU",
    "MAX_INSTANCE_BITS",
]
