"""Models: the small CNN of the AIXI paper and the AIXI function as a Keras model."""

from .aixi_cnn import aixi_cnn_logits, build_aixi_cnn
from .aixi_function import AIXIFunctionModel

__all__ = ["build_aixi_cnn", "aixi_cnn_logits", "AIXIFunctionModel"]
