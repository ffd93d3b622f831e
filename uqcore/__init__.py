"""uqcore: transformers whose attention is stochastic, and the statistics of their samples.

Model code imports torch only (never streamlit, plotly or altair). The names below are the
library's front door; each lives in a small module of its own.
"""

from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqcore.config import FAMILIES, FAMILY_TITLES, AttentionConfig, ModelConfig
from uqcore.errors import CheckpointError, ConfigError, InputError, UQError
from uqcore.model import build_model
from uqcore.sampling import Capture, SampleResult, sample
from uqcore.settings import SamplingSettings
from uqcore.vocab import Vocab

__version__ = "0.1.0"

__all__ = [
    "FAMILIES",
    "FAMILY_TITLES",
    "AttentionConfig",
    "Capture",
    "CheckpointError",
    "ConfigError",
    "InputError",
    "ModelConfig",
    "SampleResult",
    "SamplingSettings",
    "UQError",
    "Vocab",
    "build_model",
    "load_checkpoint",
    "sample",
    "save_checkpoint",
]
