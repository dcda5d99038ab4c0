"""Layout shared by the image-grid plots."""

from __future__ import annotations

from typing import Any

__all__ = ["finish_image_grid"]


def finish_image_grid(fig: Any, axes: Any) -> Any:
    """Hide the ticks of every axis of an image grid, tighten the layout, return ``fig``."""
    for ax in axes.ravel():
        ax.set(xticks=[], yticks=[])
    fig.tight_layout()
    return fig
