"""uqcore: transformers whose attention is stochastic, and the statistics of their samples.

The library imports torch, numpy, safetensors, scikit-learn, scipy and tokenizers only (never
the lab ``uqlab``, the app, streamlit, plotly or altair) and knows no folder of the repository:
every path is an argument. The names below are the library's front door; each lives in a small
module of its own.
"""

from uqcore.build import build_model
from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError, ConfigError, InputError, UQError
from uqcore.families import FAMILIES, FamilySpec, get_family
from uqcore.inference.sampling import Capture, SampleResult, sample
from uqcore.nets.maps import LayerMaps
from uqcore.settings import SamplingSettings
from uqcore.text.vocab import Vocab

__version__ = "0.1.0"

__all__ = [
    "FAMILIES",
    "Capture",
    "CheckpointError",
    "ConfigError",
    "FamilySpec",
    "InputError",
    "LayerMaps",
    "ModelConfig",
    "SampleResult",
    "SamplingSettings",
    "UQError",
    "Vocab",
    "build_model",
    "get_family",
    "load_checkpoint",
    "sample",
    "save_checkpoint",
]
