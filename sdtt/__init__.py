"""sdtt: Self-Directed Turing Tests of persona chatbots."""

from sdtt.errors import SdttError

__version__ = "0.1.0"
__all__ = ["SdttError", "__version__"]
